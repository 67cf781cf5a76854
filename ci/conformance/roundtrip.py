"""Runs inside the barbican venv: loads the no-auth API from a paste file and round-trips a
secret through barbican's vault plugin into the fake OpenBao.

Usage: python roundtrip.py <paste.ini> <openbao.json> <ca.crt>

Prints one line per step (ok/FAIL) and exits non-zero on the first failure.
"""

import json
import ssl
import sys
import urllib.error
import urllib.request
import warnings

warnings.simplefilter("ignore")

HEADERS = {"X-Project-Id": "conformance-project", "X-Roles": "member,admin",
           "X-User-Id": "conformance-user", "Accept": "application/json"}


def fail(step, detail):
    print("FAIL %s: %s" % (step, detail))
    sys.exit(1)


def fake_keys(facts, ca):
    """The keys the fake holds under barbican/ (asked with its root token)."""
    context = ssl.create_default_context(cafile=ca)
    request = urllib.request.Request(facts["url"] + "/v1/barbican/metadata?list=true",
                                     headers={"X-Vault-Token": facts["root_token"]})
    try:
        with urllib.request.urlopen(request, context=context) as response:
            return json.load(response)["data"]["keys"]
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return []
        raise


def main():
    paste, facts_path, ca = sys.argv[1:4]
    facts = json.load(open(facts_path))
    from paste.deploy import loadapp
    import webob

    try:
        app = loadapp("config:" + paste, name="main")
    except Exception as e:
        fail("load", "%s: %s" % (type(e).__name__, e))

    def call(method, path, body=None, accept="application/json"):
        request = webob.Request.blank(path, method=method, headers=dict(HEADERS, Accept=accept))
        if body is not None:
            request.content_type = "application/json"
            request.body = json.dumps(body).encode()
        return request.get_response(app)

    before = set(fake_keys(facts, ca))
    payload = "conformance secret payload"
    created = call("POST", "/v1/secrets", {"name": "conformance", "payload": payload,
                                           "payload_content_type": "text/plain"})
    if created.status_int != 201:
        fail("store", "%s %s" % (created.status, created.text[:300]))
    ref = created.json["secret_ref"]
    secret_id = ref.rsplit("/", 1)[1]
    print("ok store: barbican answered 201 with %s" % ref)

    added = set(fake_keys(facts, ca)) - before
    if len(added) != 1:
        fail("written", "the fake OpenBao gained %d keys under barbican/" % len(added))
    print("ok written: the fake OpenBao holds the new key barbican/%s" % added.pop())

    read = call("GET", "/v1/secrets/%s/payload" % secret_id, accept="text/plain")
    if read.status_int != 200 or read.text != payload:
        fail("read back", "%s %r" % (read.status, read.text[:300]))
    print("ok read back: the payload round-trips")

    deleted = call("DELETE", "/v1/secrets/%s" % secret_id)
    if deleted.status_int != 204:
        fail("delete", "%s %s" % (deleted.status, deleted.text[:300]))
    gone = call("GET", "/v1/secrets/%s/payload" % secret_id, accept="text/plain")
    if gone.status_int != 404:
        fail("deleted", "reading a deleted secret answered %s" % gone.status)
    print("ok delete: 204, then 404 on read")


if __name__ == "__main__":
    main()
