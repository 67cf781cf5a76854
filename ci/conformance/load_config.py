"""Loads one rendered config directory into the barbican installed in this interpreter's venv.

Usage: python load_config.py options <dir> <namespace> ...
       python load_config.py barbican <dir>

The two steps run in separate processes: listing every namespace's options imports modules
that set oslo.config's global state, which would leak into barbican's own start-up.

Run with HOME pointing at a directory whose .barbican/ holds the same barbican.conf: barbican
finds its configuration there (it ignores --config-file), exactly as the API pods find theirs
under /etc/barbican/. The database is a throwaway sqlite file given through
OS_DATABASE__CONNECTION, the same variable the operator uses for the real DSN.

Checks, printing one line each and exiting non-zero on the first failure:
  1. every option in barbican.conf is one barbican (or the keystoneauth password plugin it is
     configured with) registers, and its value parses as that option's type;
  2. barbican's own multiple-secret-store validation accepts the store sections;
  3. paste.deploy loads the composite app from barbican-api-paste.ini, which runs barbican's
     start-up: database engine, secret-store sync, and every pipeline's filters;
  4. where the config audits the API, the audit filter's transport URL is the one in
     OS_AUDIT_MIDDLEWARE_NOTIFICATIONS__TRANSPORT_URL (how spec.audit's messaging driver gets it).
"""

import configparser
import os
import sys
import warnings

warnings.simplefilter("ignore")

# The variable the operator sets from spec.audit.transportUrlSecretRef (run.py sets it).
AUDIT_TRANSPORT_ENV = "OS_AUDIT_MIDDLEWARE_NOTIFICATIONS__TRANSPORT_URL"


def fail(step, error):
    print("FAIL %s: %s: %s" % (step, type(error).__name__, error))
    sys.exit(1)


def check_options(conf_path, namespaces):
    from keystoneauth1 import loading
    from oslo_config import cfg, generator

    parser = configparser.RawConfigParser(strict=False)
    parser.optionxform = str
    parser.read(conf_path)
    conf = cfg.ConfigOpts()
    registered = {}
    for _ns, groups in generator._list_opts(namespaces):
        for group, opts in groups:
            name = getattr(group, "name", group) or "DEFAULT"
            for opt in opts:
                registered.setdefault(name, {})[opt.dest] = opt
    for opt in loading.get_auth_plugin_conf_options("password"):
        registered.setdefault("keystone_authtoken", {})[opt.dest] = opt
    suffixes = parser.get("secretstore", "stores_lookup_suffix", fallback="")
    for suffix in filter(None, suffixes.split(",")):
        registered["secretstore:" + suffix] = {
            o.dest: o for o in [cfg.StrOpt("secret_store_plugin"), cfg.StrOpt("crypto_plugin"), cfg.BoolOpt("global_default")]
        }
    for group, opts in registered.items():
        for opt in opts.values():
            try:
                conf.register_opt(opt, group=None if group == "DEFAULT" else group)
            except cfg.DuplicateOptError:
                pass
    conf(args=[], default_config_files=[conf_path])
    sections = ["DEFAULT"] + parser.sections()
    for section in sections:
        for key in parser[section]:
            if section != "DEFAULT" and key in parser.defaults():
                continue
            if key not in registered.get(section, {}):
                raise KeyError("[%s] %s is not an option barbican reads" % (section, key))
            group = conf if section == "DEFAULT" else getattr(conf, section)
            getattr(group, key)  # parses the value as the option's type
    return sum(len(parser[s]) for s in sections)


def main():
    step, directory = sys.argv[1], sys.argv[2]
    conf_path = os.path.join(directory, "barbican.conf")
    paste_path = os.path.join(directory, "barbican-api-paste.ini")
    if step == "options":
        try:
            count = check_options(conf_path, sys.argv[3:])
            print("ok options: %d options are barbican's and parse" % count)
        except Exception as e:
            fail("options", e)
        return
    try:
        # The app imports the secret-store interface at start-up, which registers its config.
        import barbican.plugin.interface.secret_store  # noqa: F401
        from barbican.plugin.util import multiple_backends
        stores = multiple_backends.read_multiple_backends_config()
        print("ok secret stores: barbican accepts %d store section(s)" % len(stores))
    except Exception as e:
        fail("secret stores", e)
    try:
        from paste.deploy import loadapp
        app = loadapp("config:" + paste_path, name="main")
        print("ok paste: %s loaded" % type(app).__name__)
    except Exception as e:
        fail("paste", e)
    transport = os.environ.get(AUDIT_TRANSPORT_ENV)
    try:
        from oslo_config import cfg
        group = getattr(cfg.CONF, "audit_middleware_notifications", None)
        if group is not None and transport:
            # The messaging driver's transport URL reaches the pods only through this variable.
            if group.transport_url != transport:
                raise ValueError("transport_url is %r, not the %s value" % (group.transport_url, AUDIT_TRANSPORT_ENV))
            print("ok audit: the audit filter reads its transport URL from %s" % AUDIT_TRANSPORT_ENV)
    except Exception as e:
        fail("audit", e)


if __name__ == "__main__":
    main()
