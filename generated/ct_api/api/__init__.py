"""The operations of the spec, one module per tag (each with an ``OPERATIONS`` table by operationId)."""
