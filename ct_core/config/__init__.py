"""What a job is made of, checked before anything is sent.

- `typed`: the typed create-job configs (`JobType`, `Hardware`, `TrainingConfig`, `InferenceConfig`,
  `SubJobConfig`), each with `validate()` and `to_dict()`;
- `optimizer`: the one canonical spelling of a typed config's optimizer block;
- `bodies`: the create-job body rules (the spec's JSON schema plus what a schema cannot say), one
  set for the client and the local server;
- `validation`: the whole-body checks shared by `create_job`, `create_job_from_body` and
  `ct submit --dry-run`, plugin validators included;
- `experimental`: the opt-in gate (`CORTEX_TRAINING_EXPERIMENTAL`) for methods the service does not
  support yet.
"""
