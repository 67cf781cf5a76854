#!/usr/bin/env python3
"""Render conformance: every golden config under tests/golden/render/<release>/ is loaded by the
barbican of that release (see load_config.py), and two negative controls (no default store, two
default stores) must be refused by barbican's own multiple-secret-store check.

The venvs are the catalog venvs (target/catalog-venvs/<release>, created on demand, installed
with the committed constraints). When PyPI cannot be reached the run is skipped with one line.
"""

import concurrent.futures
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GOLDEN = os.path.join(ROOT, "tests", "golden", "render")
CATALOGS = os.path.join(ROOT, "operator", "catalogs")

spec = importlib.util.spec_from_file_location("generate", os.path.join(CATALOGS, "generate.py"))
generate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generate)


# Golden cases barbican must refuse, with the evidence expected in the failure.
EXPECTED_FAILURES = {
    # Two stores on the same plugin: barbican's start-up sync inserts one secret_stores row per
    # plugin class, and a second vault_plugin store violates its unique name. This is why a
    # projection allows one OpenBao store per Barbican (MultipleOpenBaoStores).
    "two-stores": "UNIQUE constraint failed: secret_stores.name",
}


def pypi_reachable():
    probe = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "barbican"],
                           capture_output=True, text=True)
    return probe.returncode == 0


def python_for(release):
    venv_dir = os.path.join(ROOT, "target", "catalog-venvs", release)
    python = generate.ensure_venv(venv_dir)
    constraints = os.path.join(CATALOGS, release + ".constraints.txt")
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    "barbican[kmip]==" + generate.RELEASES[release], "-c", constraints], check=True)
    return python


def load(python, release, config_dir):
    """Runs both load steps; returns (ok, output lines)."""
    namespaces = json.load(open(os.path.join(CATALOGS, release + ".json")))["namespaces"]
    home = tempfile.mkdtemp(prefix="barbican-conformance-")
    try:
        os.makedirs(os.path.join(home, ".barbican"))
        shutil.copy(os.path.join(config_dir, "barbican.conf"), os.path.join(home, ".barbican"))
        env = dict(os.environ, HOME=home,
                   OS_DATABASE__CONNECTION="sqlite:///" + os.path.join(home, "barbican.sqlite"),
                   # The throwaway database starts empty; the operator's db-sync Job does this for real.
                   OS_DEFAULT__DB_AUTO_CREATE="true",
                   # What the operator sets from spec.audit.transportUrlSecretRef; the in-memory
                   # transport connects nowhere.
                   OS_AUDIT_MIDDLEWARE_NOTIFICATIONS__TRANSPORT_URL="fake://")
        lines = []
        for step, extra in (("options", namespaces), ("barbican", [])):
            out = subprocess.run([python, os.path.join(HERE, "load_config.py"), step, config_dir] + extra,
                                 capture_output=True, text=True, env=env)
            lines += [l for l in out.stdout.splitlines() if l.startswith(("ok ", "FAIL "))]
            if out.returncode != 0:
                if not any(l.startswith("FAIL") for l in lines):
                    lines.append("FAIL %s: %s" % (step, out.stderr.strip().splitlines()[-1:]))
                return False, lines
        return True, lines
    finally:
        shutil.rmtree(home, ignore_errors=True)


def shipped_paste_matches(release, rendered_dir):
    """The rendered paste file (no middleware) holds exactly the sections and options of the one
    the release's wheel installs at etc/barbican/barbican-api-paste.ini."""
    import configparser

    def read(path):
        parser = configparser.RawConfigParser(strict=False, delimiters=("=", ":"))
        parser.optionxform = str
        parser.read(path)
        return {s: dict(parser[s]) for s in parser.sections()}

    shipped = os.path.join(ROOT, "target", "catalog-venvs", release, "etc", "barbican", "barbican-api-paste.ini")
    ours, theirs = read(os.path.join(rendered_dir, "barbican-api-paste.ini")), read(shipped)
    differing = sorted(name for name in set(ours) | set(theirs) if ours.get(name) != theirs.get(name))
    return not differing, differing


def negative(source_dir, edit):
    """A copy of a golden directory with barbican.conf edited."""
    target = tempfile.mkdtemp(prefix="barbican-negative-")
    for name in os.listdir(source_dir):
        shutil.copy(os.path.join(source_dir, name), target)
    path = os.path.join(target, "barbican.conf")
    text = open(path).read()
    edited = edit(text)
    assert edited != text, "the negative control did not change the file"
    open(path, "w").write(edited)
    return target


def check_release(release):
    """Every check of one release; returns (printed lines, failures)."""
    out, failures = [], 0
    python = python_for(release)
    release_dir = os.path.join(GOLDEN, release)
    for case in sorted(os.listdir(release_dir)):
        ok, lines = load(python, release, os.path.join(release_dir, case))
        paste = open(os.path.join(release_dir, case, "barbican-api-paste.ini")).read()
        if "/v1 = barbican-api-keystone-audit" in paste and not any(l.startswith("ok audit") for l in lines):
            ok = False
            lines.append("FAIL audit: the audited config's transport URL check did not run")
        expected = EXPECTED_FAILURES.get(case)
        if expected:
            ok = not ok and any(expected in l for l in lines)
            out.append("%s %s/%s (barbican must refuse it): %s" % ("ok  " if ok else "FAIL", release, case,
                                                                 "; ".join(l[:200] for l in lines)))
        else:
            out.append("%s %s/%s: %s" % ("ok  " if ok else "FAIL", release, case, "; ".join(lines)))
        failures += not ok
    same, difference = shipped_paste_matches(release, os.path.join(release_dir, "minimal"))
    out.append("%s %s paste layout equals the shipped barbican-api-paste.ini%s" % (
        "ok  " if same else "FAIL", release, "" if same else ": %s" % difference))
    failures += not same
    controls = [
        ("no default store", lambda t: t.replace("global_default = True\n", "")),
        ("two default stores", lambda t: t.replace(
            "[secretstore:vault-legacy]\n", "[secretstore:vault-legacy]\nglobal_default = True\n")),
    ]
    for name, edit in controls:
        source = "two-stores" if name == "two default stores" else "minimal"
        target = negative(os.path.join(release_dir, source), edit)
        ok, lines = load(python, release, target)
        refused = not ok and any("MultipleStoreIncorrectGlobalDefault" in l for l in lines)
        out.append("%s %s negative control (%s): %s" % ("ok  " if refused else "FAIL", release, name,
                                                      "; ".join(lines)))
        failures += not refused
        shutil.rmtree(target, ignore_errors=True)
    return out, failures


def main():
    if not pypi_reachable():
        print("render conformance: skipped, PyPI is unreachable")
        return 0
    # The releases are independent (a venv and a throwaway HOME each) and each check is a
    # process of its own, so they run a core each: alone after the build this check had one
    # core busy and the other idle. Output is printed in release order.
    releases = sorted(os.listdir(GOLDEN))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(check_release, releases))
    failures = 0
    for lines, failed in results:
        for line in lines:
            print(line)
        failures += failed
    print("render conformance: %d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
