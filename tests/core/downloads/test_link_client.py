"""The presigned-link client under checkpoint downloads: redirects, TLS, proxies, errors, no auth."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ct_core.downloads.checkpoint import CheckpointDownloader, CheckpointDownloadError
from ct_core.downloads.link_client import BLOCK_BYTES, LinkClient, LinkTransportError


def _answer(url: str, size: int, name: str = "w.bin") -> dict[str, Any]:
    return {"files": [{"filename": name, "url": url, "size_bytes": size}]}


def _no_sleep(_: float) -> None:
    return None


def test_redirect_to_the_object_is_followed(misbehaving_server, act, tmp_path: Path) -> None:
    data = os.urandom(300_000)
    target = f"{misbehaving_server.base_url}/bucket/w.bin?sig=abc"
    misbehaving_server.script(act(307, None, {"Location": target}), act(200, data))
    link = misbehaving_server.base_url + "/l/w"
    downloader = CheckpointDownloader(lambda: _answer(link, len(data)), tmp_path)
    try:
        downloader.run()
    finally:
        downloader.close()
    assert (tmp_path / "w.bin").read_bytes() == data
    assert [seen.path for seen in misbehaving_server.requests] == ["/l/w", "/bucket/w.bin?sig=abc"]


def test_endless_redirects_fail_without_retrying(misbehaving_server, act, tmp_path: Path) -> None:
    loop = f"{misbehaving_server.base_url}/again"
    misbehaving_server.script(*[act(302, None, {"Location": loop}) for _ in range(40)])
    downloader = CheckpointDownloader(lambda: _answer(loop, 10), tmp_path, sleep=_no_sleep)
    with pytest.raises(CheckpointDownloadError, match="too many redirects"):
        downloader.run()
    downloader.close()
    # One GET plus the followed hops; a retry would have started the chain again.
    assert len(misbehaving_server.requests) <= 6
    assert not (tmp_path / "w.bin").exists()


def test_links_never_carry_an_authorization_header(misbehaving_server, act, tmp_path: Path) -> None:
    misbehaving_server.script(act(200, b"abc"))
    downloader = CheckpointDownloader(lambda: _answer(misbehaving_server.base_url + "/x", 3), tmp_path)
    downloader.run()
    downloader.close()
    headers = {key.lower() for key in misbehaving_server.requests[0].headers}
    assert "authorization" not in headers and "x-snowflake-authorization-token-type" not in headers


def test_untrusted_certificate_is_refused_at_once(tls_server, act, tmp_path: Path) -> None:
    server, _cert = tls_server
    server.script(act(200, b"secret"))
    downloader = CheckpointDownloader(lambda: _answer(server.base_url + "/x", 6), tmp_path, sleep=_no_sleep)
    with pytest.raises(CheckpointDownloadError, match="TLS error") as caught:
        downloader.run()
    downloader.close()
    assert "certificate verify failed" in str(caught.value).lower()
    assert not (tmp_path / "w.bin").exists()


def test_a_ca_bundle_path_makes_the_certificate_trusted(tls_server, act, tmp_path: Path) -> None:
    server, cert = tls_server
    server.script(act(200, b"secret"))
    downloader = CheckpointDownloader(lambda: _answer(server.base_url + "/x", 6), tmp_path, verify=str(cert))
    downloader.run()
    downloader.close()
    assert (tmp_path / "w.bin").read_bytes() == b"secret"


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
def test_verification_can_be_turned_off(tls_server, act, tmp_path: Path) -> None:
    server, _cert = tls_server
    server.script(act(200, b"secret"))
    downloader = CheckpointDownloader(lambda: _answer(server.base_url + "/x", 6), tmp_path, verify=False)
    downloader.run()
    downloader.close()
    assert (tmp_path / "w.bin").read_bytes() == b"secret"


def test_http_proxy_from_the_environment_is_used(
    misbehaving_server, act, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The scripted server plays the proxy: a plain-http GET through a proxy is sent to it with the
    # absolute URL of the object as its target.
    monkeypatch.setenv("HTTP_PROXY", misbehaving_server.base_url)
    monkeypatch.setenv("NO_PROXY", "")
    misbehaving_server.script(act(200, b"via-proxy"))
    url = "http://objects.invalid/bucket/w.bin?sig=1"
    downloader = CheckpointDownloader(lambda: _answer(url, 9), tmp_path)
    downloader.run()
    downloader.close()
    assert misbehaving_server.requests[0].path == url
    assert (tmp_path / "w.bin").read_bytes() == b"via-proxy"


def test_no_proxy_sends_the_request_directly(
    misbehaving_server, act, closed_port: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    misbehaving_server.script(act(200, b"direct"))
    downloader = CheckpointDownloader(lambda: _answer(misbehaving_server.base_url + "/x", 6), tmp_path)
    downloader.run()
    downloader.close()
    assert misbehaving_server.requests[0].path == "/x"


def test_connection_refused_is_a_retryable_transport_error(closed_port: int) -> None:
    client = LinkClient()
    with pytest.raises(LinkTransportError) as caught, client.get(f"http://127.0.0.1:{closed_port}/x"):
        pass
    client.close()
    assert caught.value.retryable is True


def test_blocks_reach_the_caller_before_the_body_ends(misbehaving_server, act) -> None:
    # A body of three blocks is handed over in several reads, each at most the block size.
    data = os.urandom(3 * BLOCK_BYTES)
    misbehaving_server.script(act(200, data))
    client = LinkClient()
    with client.get(misbehaving_server.base_url + "/x") as response:
        blocks = list(response.iter_blocks())
    client.close()
    assert b"".join(blocks) == data
    assert len(blocks) >= 3 and max(len(block) for block in blocks) <= BLOCK_BYTES
