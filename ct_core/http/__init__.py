"""The one request path of ct.

- `transport`: `Transport.request()` — URL from the route table, timeouts, signing, redirects
  refused, errors mapped, the retry policy applied; `Transport.stream()` for answers read as they
  arrive;
- `routes`: URLs of operations, from `ct_api.routes` (generated from openapi/ by `make regen`);
- `retry`: the retry policy (which failures get another attempt, the waits, the loop), also used
  by the download paths;
- `pool`: the connections, and transport failures as ct exceptions: `direct` (keep-alive HTTP/1.1
  on sockets, answers parsed by llhttp through httptools) unless the environment names a proxy,
  then httpcore's public API.
"""
