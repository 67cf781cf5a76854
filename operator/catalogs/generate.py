#!/usr/bin/env python3
"""Generate the per-release option catalogs the admission webhook checks extraConfig against.

For each release it installs barbican from PyPI into a venv under target/catalog-venvs/, reads
the namespace list from barbican's own oslo-config-generator configuration (shipped in the
sdist as etc/oslo-config-generator/barbican.conf), and asks oslo.config for every option of
those namespaces. The operator renders [keystone_authtoken] auth_type = password, so the options
of keystoneauth's password plugin are added to that section as well. Each option records
whether oslo.config marks it `secret` (a credential the operator keeps out of the file) and its
value type (URI, HostAddress, Port, String, ...).

Output, per release: <out>/<release>.json (sections -> options, with deprecated names mapped to
their replacement) and <out>/<release>.constraints.txt (the exact packages it was generated
with). A later run installs with those constraints, so regenerating reproduces the files; pass
--refresh to drop them and take the newest packages instead.

Usage: operator/catalogs/generate.py [--out DIR] [--refresh] [RELEASE ...]
"""

import argparse
import concurrent.futures
import configparser
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import venv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# OpenStack release -> barbican version (PyPI: 20.x = 2025.1, 21.x = 2025.2, ...).
RELEASES = {
    "2025.1": "20.0.0",
    "2025.2": "21.0.0",
    "2026.1": "22.0.0",
    "2026.2": "23.0.0",
}

# Runs inside the release's venv: prints the catalog for the namespaces given as arguments.
LISTER = r"""
import json, sys
from oslo_config import generator
from keystoneauth1 import loading

def group_name(group):
    name = getattr(group, "name", group)
    return "DEFAULT" if name in (None, "DEFAULT") else name

sections = {}
def add(group, opt):
    section = sections.setdefault(group_name(group), {"options": {}, "deprecated": {}})
    section["options"][opt.dest] = {
        "deprecatedForRemoval": bool(getattr(opt, "deprecated_for_removal", False)),
        # oslo.config's own mark for a credential (it masks these in its logs): the operator
        # refuses every such option in extraConfig and plugins.
        "secret": bool(getattr(opt, "secret", False)),
        # The option's value type as oslo.config (or keystoneauth) declares it: URI, HostAddress,
        # Port, Boolean, String, ... The operator refuses the options that decide where a
        # credential it delivers goes from it (config_ownership::destination).
        "valueType": getattr(opt.type, "__name__", None) or type(opt.type).__name__,
    }
    for old in getattr(opt, "deprecated_opts", None) or []:
        old_group = group_name(old.group) if old.group else group_name(group)
        old_name = (old.name or opt.dest).replace("-", "_")
        if (old_group, old_name) == (group_name(group), opt.dest):
            continue
        target = sections.setdefault(old_group, {"options": {}, "deprecated": {}})
        target["deprecated"][old_name] = "[%s] %s" % (group_name(group), opt.dest)

for _namespace, groups in generator._list_opts(sys.argv[1:]):
    for group, opts in groups:
        for opt in opts:
            add(group, opt)
for opt in loading.get_auth_plugin_conf_options("password"):
    add("keystone_authtoken", opt)

# A name that is current somewhere is not reported as a deprecated alias there.
for section in sections.values():
    for name in list(section["deprecated"]):
        if name in section["options"]:
            del section["deprecated"][name]
json.dump(sections, sys.stdout, sort_keys=True)
"""


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def ensure_venv(path):
    if not os.path.exists(os.path.join(path, "bin", "python")):
        venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return os.path.join(path, "bin", "python")


def namespaces(python, version):
    """The namespace list from barbican's sdist generator configuration."""
    with tempfile.TemporaryDirectory() as tmp:
        run([python, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             "-d", tmp, "barbican==" + version])
        archive = [f for f in os.listdir(tmp) if f.endswith(".tar.gz")][0]
        with tarfile.open(os.path.join(tmp, archive)) as tar:
            member = "barbican-%s/etc/oslo-config-generator/barbican.conf" % version
            text = tar.extractfile(member).read().decode()
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    # 'namespace' repeats; collect every occurrence.
    found = [line.split("=", 1)[1].strip() for line in text.splitlines()
             if line.replace(" ", "").startswith("namespace=")]
    parser.read_string(text)
    return found


def generate(release, version, out, refresh):
    venv_dir = os.path.join(ROOT, "target", "catalog-venvs", release)
    python = ensure_venv(venv_dir)
    constraints = os.path.join(out, release + ".constraints.txt")
    # The kmip extra brings pykmip, which the KMIP secret-store namespace imports.
    install = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "barbican[kmip]==" + version]
    if os.path.exists(constraints) and not refresh:
        install += ["-c", constraints]
    run(install)
    names = namespaces(python, version)
    listed = run([python, "-c", LISTER] + names, capture_output=True, text=True).stdout
    catalog = {
        "release": release,
        "barbican": version,
        "namespaces": names,
        "sections": json.loads(listed),
    }
    with open(os.path.join(out, release + ".json"), "w") as f:
        json.dump(catalog, f, indent=1, sort_keys=True)
        f.write("\n")
    frozen = run([python, "-m", "pip", "freeze", "--all", "--exclude", "pip", "--exclude", "setuptools"],
                 capture_output=True, text=True).stdout
    if refresh or not os.path.exists(constraints):
        with open(constraints, "w") as f:
            f.write(frozen)


def main():
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--out", default=HERE)
    args.add_argument("--refresh", action="store_true")
    args.add_argument("releases", nargs="*", default=sorted(RELEASES))
    opts = args.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    for release in opts.releases:
        if release not in RELEASES:
            sys.exit("unknown release %s; known: %s" % (release, ", ".join(sorted(RELEASES))))

    # The releases share nothing (a venv and two files each); most of a release's time is pip
    # waiting on the network and one process at a time, so they run a core each.
    def one(release):
        print("catalog %s (barbican %s)" % (release, RELEASES[release]), flush=True)
        generate(release, RELEASES[release], opts.out, opts.refresh)

    # The venvs are made one at a time first: making one copies the interpreter into it and
    # runs it, and a thread forking meanwhile inherits the copy's open file, so running it
    # failed with ETXTBSY ("Text file busy") now and then.
    for release in opts.releases:
        ensure_venv(os.path.join(ROOT, "target", "catalog-venvs", release))

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        # list() re-raises the first release's failure.
        list(pool.map(one, opts.releases))


if __name__ == "__main__":
    main()
