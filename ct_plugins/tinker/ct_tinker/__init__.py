"""A Tinker-compatible HTTP API (the `tinker` SDK's `/api/v1/...` routes) over Cortex Training.

See docs/tinker.md. `service.TinkerService` translates each call into Cortex Training jobs and
data-plane requests through ct_core; `plugin` serves it inside `ct local serve`.
"""
