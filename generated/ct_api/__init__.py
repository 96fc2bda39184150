"""The typed operations of the Cortex Training REST API, generated from openapi/cortex-training.yaml.

Written by openapi/regen.py (``make regen``); never edited by hand. ``ct_api.api.<tag>`` holds one
function per operation over ct's transport, ``ct_api.models`` the schemas as TypedDicts,
``ct_api.types`` what the functions need of a transport, ``ct_api.routes`` every operation's method
and path. Importing this package imports nothing else.
"""
