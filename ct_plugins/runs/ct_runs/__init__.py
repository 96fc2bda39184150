"""Managed training runs and dataset builds on top of Cortex Training's primitives.

A dataset build turns a JSONL file into fingerprinted train and validation splits behind leakage
gates; a run trains a model on a succeeded build through ordinary Cortex Training jobs (fwd-bwd,
step with a client-side learning rate, save, load), checkpointing and validating as it goes, and
resumes exactly after any crash. Both execute as DBOS workflows. The service runs inside
`ct local serve` or on its own (`ct runs serve`); see docs/runs.md and docs/datasets.md.
"""
