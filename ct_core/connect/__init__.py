"""Which service to talk to, and as whom.

- `resolve`: the one resolver of flags, environment variables, config files and the remembered
  login into a `ResolvedConnection` (the client builds itself from it: `from_resolved`);
- `files`: reading and writing the files that hold connection settings (connections.toml, the
  legacy JSON config, the remembered login);
- `snowflake`: Snowflake Connector sessions for profile clients (the auth provider that signs each
  request) and the small SQL statements client;
- `snowpark`: a Snowpark Session on the client's own credentials.
"""
