"""The control plane's pure helpers: job and request statuses with the poll schedule (`polling`),
and the shaping of answers and arguments (`shaping`: capacity, the account-level job list, a
create body rebuilt from a job record). The control-plane methods themselves are on the facade,
`ct_core.client.CortexTrainingClient`; they send through `ct_core.http.transport`.
"""
