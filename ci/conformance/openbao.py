#!/usr/bin/env python3
"""OpenBao fidelity: a real barbican of the newest supported release, with its vault plugin,
stores a secret in the fake OpenBao (`barbican-fakes openbao`), reads it back and deletes it.

The fake mints the AppRole credentials; barbican logs in with them (castellan's
POST /v1/auth/approle/login) and writes POST /v1/barbican/data/<uuid>. barbican answers 201
even when the KV write fails, so the proof is the read-back, and the fake's own listing of the
mount. The API runs without keystone: a paste pipeline with the unauthenticated context, the
project and roles given as X-Project-Id and X-Roles headers (roundtrip.py does the requests).

Uses the catalog venv of the newest release (see run.py); skipped with one line without PyPI.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import run  # noqa: E402  (the venv and PyPI helpers of the render conformance)

BARBICAN_CONF = """[DEFAULT]
db_auto_create = true
host_href = http://barbican.test:9311

[secretstore]
enable_multiple_secret_stores = true
stores_lookup_suffix = openbao

[secretstore:openbao]
global_default = True
secret_store_plugin = vault_plugin

[vault_plugin]
vault_url = {url}
use_ssl = true
ssl_ca_crt_file = {ca}
approle_role_id = {role_id}
approle_secret_id = {secret_id}
kv_mountpoint = barbican
"""

# The no-auth API: barbican 22.x and later ship an unauthenticated context middleware that reads
# req.request_id, which the request_id filter no longer sets; copy_request_id bridges it.
PASTE = """[composite:main]
use = egg:Paste#urlmap
/v1 = barbican_api

[pipeline:barbican_api]
pipeline = request_id copy_request_id unauthenticated-context apiapp

[app:apiapp]
paste.app_factory = barbican.api.app:create_main_app

[filter:request_id]
paste.filter_factory = oslo_middleware.request_id:RequestId.factory

[filter:copy_request_id]
paste.filter_factory = copy_request_id:factory

[filter:unauthenticated-context]
paste.filter_factory = barbican.api.middleware.context:UnauthenticatedContextMiddleware.factory
"""

COPY_REQUEST_ID = '''
def factory(global_conf, **local_conf):
    def filter(app):
        def middleware(environ, start_response):
            import webob
            request = webob.Request(environ)
            request.request_id = environ.get("openstack.request_id")
            return app(environ, start_response)
        return middleware
    return filter
'''


def fake_binary():
    # ci/test.sh hands over the binary its test build made: building it here on its own would
    # unify dependency features differently and recompile half the dependency tree.
    given = os.environ.get("BARBICAN_FAKES_BIN")
    if given and os.path.exists(given):
        return given
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(["cargo", "build", "-q", "-p", "barbican-fakes", "--bin", "barbican-fakes"],
                   cwd=ROOT, check=True)
    return os.path.join(target, "debug", "barbican-fakes")


def roundtrip(python, work, facts):
    """One barbican process against the fake; returns (ok, ok/FAIL lines, stderr)."""
    home = tempfile.mkdtemp(prefix="home-", dir=work)
    os.makedirs(os.path.join(home, ".barbican"))
    conf = BARBICAN_CONF.format(ca=os.path.join(work, "ca.crt"), **facts)
    open(os.path.join(home, ".barbican", "barbican.conf"), "w").write(conf)
    paste = os.path.join(work, "barbican-api-paste.ini")
    open(paste, "w").write(PASTE)
    open(os.path.join(work, "copy_request_id.py"), "w").write(COPY_REQUEST_ID)
    facts_path = os.path.join(home, "openbao.json")
    json.dump(facts, open(facts_path, "w"))
    env = dict(os.environ, HOME=home, PYTHONPATH=work,
               OS_DATABASE__CONNECTION="sqlite:///" + os.path.join(home, "barbican.sqlite"))
    out = subprocess.run([python, os.path.join(HERE, "roundtrip.py"), paste, facts_path,
                          os.path.join(work, "ca.crt")], capture_output=True, text=True, env=env)
    lines = [l for l in out.stdout.splitlines() if l.startswith(("ok ", "FAIL "))]
    ok = out.returncode == 0 and bool(lines) and not any(l.startswith("FAIL") for l in lines)
    return ok, lines, out.stderr


def main():
    if not run.pypi_reachable():
        print("openbao conformance: skipped, PyPI is unreachable")
        return 0
    release = max(run.generate.RELEASES)
    python = run.python_for(release)
    work = tempfile.mkdtemp(prefix="barbican-openbao-")
    fake = subprocess.Popen([fake_binary(), "openbao", "--out", work],
                            stdout=subprocess.PIPE, text=True)
    try:
        ready = fake.stdout.readline().strip()
        if not ready.startswith("ready "):
            print("FAIL the fake OpenBao did not start: %r" % ready)
            return 1
        facts = json.load(open(os.path.join(work, "openbao.json")))
        ok, lines, stderr = roundtrip(python, work, facts)
        for line in lines:
            status, rest = line.split(" ", 1)
            print("%-4s barbican %s + fake OpenBao: %s" % (status, run.generate.RELEASES[release], rest))
        if not ok and stderr.strip():
            print("  " + "\n  ".join(stderr.strip().splitlines()[-15:]))
        # Negative control: with a secret ID the fake never issued, the round trip must fail.
        refused, control, _ = roundtrip(python, work, dict(facts, secret_id="not-a-secret-id"))
        refused = not refused
        print("%-4s negative control (unknown secret ID): %s" % ("ok" if refused else "FAIL",
                                                                "; ".join(control)))
        failed = not ok or not refused
        print("openbao conformance: %s" % ("FAILED" if failed else "a secret round-trips through barbican's vault plugin"))
        return 1 if failed else 0
    finally:
        fake.terminate()
        fake.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
