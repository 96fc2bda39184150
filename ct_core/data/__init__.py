"""The data plane: what a training loop and a sampler send to a running job.

- `plane`: `DataPlane` — forward/backward, step, save, load, the generic operations, request
  polling and live logs (the facade forwards to it);
- `generate`: `Generation` — generate, generate-stream and the stream's events;
- `chunk_groups`: posting a large DSSST1 frame as a request-chunk group, and its replay rule;
- `operations`: bodies of the generic operation envelope;
- `results`: the poll loop, result-chunk reassembly and decoding;
- `logs`: live logs and events, and what a finished job's log tail means;
- `payloads`: building forward/backward batches (the readable JSON of `ct fwd-bwd`);
- `pipeline`: future-like handles for pipelined training loops.
"""
