#!/usr/bin/env python3
"""Keystone fidelity: the real keystonemiddleware `authtoken` (as barbican's paste pipeline
loads it) and keystoneauth's password plugin work against the fake Keystone
(`barbican-fakes keystone`).

A test user gets a project-scoped token with keystoneauth (version discovery, then POST
/v3/auth/tokens); authtoken, logged in as the service user with the options barbican.conf's
[keystone_authtoken] carries, validates it and hands the wrapped app the user's project and
roles. Negative controls: a forged token is refused (401), and with a wrong service password
authtoken cannot log in, so it accepts no token (503, as keystonemiddleware answers when its
own login fails).

Uses the catalog venv of the newest release (see run.py); skipped with one line without PyPI.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import openbao  # noqa: E402  (the fake binary helper)
import run  # noqa: E402  (the venv and PyPI helpers of the render conformance)

SERVICE_PASSWORD = "service-secret-7d2"
USER_PASSWORD = "user-secret-1b9"

# Runs inside the barbican venv: prints one JSON line with what the wrapped app saw.
CHECK = r'''
import json, sys
import webob
from keystoneauth1 import session
from keystoneauth1.identity import v3
from keystonemiddleware import auth_token

url, service_password, user_password = sys.argv[1:4]
seen = {}

def app(environ, start_response):
    for key in ("HTTP_X_IDENTITY_STATUS", "HTTP_X_PROJECT_ID", "HTTP_X_PROJECT_NAME",
                "HTTP_X_ROLES", "HTTP_X_USER_NAME"):
        seen[key] = environ.get(key)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]

# The options barbican.conf's [keystone_authtoken] carries, given as paste options.
conf = {
    "auth_type": "password", "auth_url": url + "/v3", "username": "barbican",
    "password": service_password, "project_name": "service", "user_domain_name": "Default",
    "project_domain_name": "Default", "www_authenticate_uri": url, "interface": "internal",
    "delay_auth_decision": "false", "log_name": "authtoken",
}
middleware = auth_token.AuthProtocol(app, conf)

user = v3.Password(auth_url=url + "/v3", username="alice", password=user_password,
                   project_name="demo", user_domain_name="Default",
                   project_domain_name="Default")
token = session.Session(auth=user).get_token()

answer = webob.Request.blank("/v1/secrets", headers={"X-Auth-Token": token}).get_response(middleware)
forged = webob.Request.blank("/v1/secrets", headers={"X-Auth-Token": "gAAAAAforged"}).get_response(middleware)
print(json.dumps({"status": answer.status_int, "seen": seen, "forged": forged.status_int,
                  "token_len": len(token)}))
'''


def check(python, url, service_password):
    out = subprocess.run([python, "-c", CHECK, url, service_password, USER_PASSWORD],
                         capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode != 0 or not lines:
        return None, out.stderr
    return json.loads(lines[-1]), out.stderr


def main():
    if not run.pypi_reachable():
        print("keystone conformance: skipped, PyPI is unreachable")
        return 0
    release = max(run.generate.RELEASES)
    python = run.python_for(release)
    work = tempfile.mkdtemp(prefix="barbican-keystone-")
    fake = subprocess.Popen([openbao.fake_binary(), "keystone", "--out", work,
                             "--user", "barbican:%s:service:service,admin" % SERVICE_PASSWORD,
                             "--user", "alice:%s:demo:creator" % USER_PASSWORD],
                            stdout=subprocess.PIPE, text=True)
    try:
        ready = fake.stdout.readline().strip()
        if not ready.startswith("ready "):
            print("FAIL the fake Keystone did not start: %r" % ready)
            return 1
        url = json.load(open(os.path.join(work, "keystone.json")))["url"]
        label = "keystonemiddleware of barbican %s + fake Keystone" % run.generate.RELEASES[release]
        result, stderr = check(python, url, SERVICE_PASSWORD)
        failures = []
        if result is None:
            failures.append("the check did not run")
            print("  " + "\n  ".join(stderr.strip().splitlines()[-15:]))
        else:
            seen = result["seen"]
            expected = {"status": 200, "HTTP_X_IDENTITY_STATUS": "Confirmed",
                        "HTTP_X_PROJECT_NAME": "demo", "HTTP_X_ROLES": "creator",
                        "HTTP_X_USER_NAME": "alice", "forged": 401}
            actual = dict(seen, status=result["status"], forged=result["forged"])
            for key, want in expected.items():
                ok = actual.get(key) == want
                failures += [] if ok else ["%s is %r, not %r" % (key, actual.get(key), want)]
            print("%-4s %s: a user token validated, project %s, roles %s; a forged token %s" % (
                "ok" if not failures else "FAIL", label, seen.get("HTTP_X_PROJECT_NAME"),
                seen.get("HTTP_X_ROLES"), result["forged"]))
        # Negative control: authtoken with a wrong service password cannot validate anything;
        # keystonemiddleware answers 503 when its own login is refused.
        control, _ = check(python, url, "not-the-service-password")
        refused = control is not None and control["status"] == 503
        print("%-4s negative control (wrong service password): %s" % (
            "ok" if refused else "FAIL", control and control["status"]))
        failures += [] if refused else ["a wrong service password was not refused"]
        for failure in failures:
            print("FAIL " + failure)
        print("keystone conformance: %s" % ("FAILED" if failures else
                                            "keystonemiddleware validates tokens of the fake Keystone"))
        return 1 if failures else 0
    finally:
        fake.terminate()
        fake.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
