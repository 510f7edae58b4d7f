"""Attachment storage for tests: a fresh directory, or a real S3-compatible server (moto's
server mode) started on a free loopback port and stopped by its process id."""

import os
import signal
import subprocess
import sys
import time

import boto3
import httpx
import pytest
from django.core.files.storage import storages

from tests.peers.ports import free_port

BUCKET = "arbe-attachments-test"


@pytest.fixture
def files_on_disk(settings, tmp_path):
    location = tmp_path / "attachments"
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {
                "location": str(location),
                "file_permissions_mode": 0o600,
                "directory_permissions_mode": 0o700,
            },
        },
    }
    yield location


@pytest.fixture(scope="session")
def s3_server():
    """``moto_server`` in its own process on loopback; killed by pid at the end."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url + "/moto-api/", timeout=1)
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto_server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def s3_client(url):
    return boto3.client(
        "s3",
        endpoint_url=url,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    )


@pytest.fixture
def files_on_s3(settings, s3_server):
    client = s3_client(s3_server)
    client.create_bucket(Bucket=BUCKET)
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": BUCKET,
                "endpoint_url": s3_server,
                "access_key": "test",
                "secret_key": "test",
                "region_name": "us-east-1",
                "location": "attachments",
                "default_acl": None,
                "file_overwrite": False,
            },
        },
    }
    yield client
    objects = client.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    for obj in objects:
        client.delete_object(Bucket=BUCKET, Key=obj["Key"])
    client.delete_bucket(Bucket=BUCKET)


@pytest.fixture(params=["disk", "s3"])
def storage_kind(request):
    """Each test that takes it runs on the filesystem and on the S3-compatible server."""
    request.getfixturevalue("files_on_disk" if request.param == "disk" else "files_on_s3")
    assert storages["attachments"] is not None
    return request.param
