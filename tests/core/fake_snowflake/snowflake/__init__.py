"""Test stand-in for the `snowflake` namespace: only `snowflake.connector` is provided."""
