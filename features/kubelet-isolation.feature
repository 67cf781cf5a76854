@real-barbican @sim-only
Feature: A tenant's pod stays inside its container

  The sim's kubelet runs every container with crun: a read-only root made of the image alone,
  its own PID, mount, IPC and UTS namespaces, a user namespace mapping it to host IDs no one
  else has, the capabilities its securityContext leaves, no_new_privs and a seccomp profile.
  Each scenario runs a hostile Job with barbican's image, as a tenant of `demo --real-barbican`
  could, and checks from the Job's own output that every attempt failed inside the container.
  Each attempt prints CONFINED when it fails and ESCAPED when it works.

  Background:
    Given a simulated cluster with the operator running
    And the namespace "openstack"
    And the namespace "tenant-b"
    And the Secret "barbican-db" in "openstack" holds:
      | key      | value        |
      | username | barbican     |
      | password | db-secret-pw |

  Scenario: a container without a securityContext reads no host secret and writes nowhere but its volumes
    When the following is applied:
      """
      apiVersion: batch/v1
      kind: Job
      metadata: {name: hostile, namespace: tenant-b}
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            volumes: [{name: scratch, emptyDir: {}}]
            containers:
            - name: hostile
              image: ghcr.io/c5c3/barbican:2025.2
              volumeMounts: [{name: scratch, mountPath: /scratch}]
              command:
              - sh
              - -c
              - |
                try() { if sh -c "$2" >/dev/null 2>&1; then echo "ESCAPED $1"; else echo "CONFINED $1"; fi; }
                try shadow 'head -1 /etc/shadow'
                try host-log 'echo x >> /var/log/dpkg.log'
                try root-write 'touch /usr/pwned'
                try venv-write 'touch "$VIRTUAL_ENV/pwned"'
                try mount 'mkdir -p /scratch/m && mount -t tmpfs t /scratch/m'
                try new-namespace 'unshare -r true'
                try host-pids 'grep -qvx sh /proc/1/comm'
                try volume-write 'echo ok > /scratch/ok && test -s /scratch/ok'
                echo "uid $(id -u)"
      """
    Then the log of the Job "hostile" in "tenant-b" contains "CONFINED shadow"
    And the log of the Job "hostile" in "tenant-b" contains "CONFINED host-log"
    And the log of the Job "hostile" in "tenant-b" contains "CONFINED root-write"
    And the log of the Job "hostile" in "tenant-b" contains "CONFINED venv-write"
    And the log of the Job "hostile" in "tenant-b" contains "CONFINED mount"
    And the log of the Job "hostile" in "tenant-b" contains "CONFINED new-namespace"
    And the log of the Job "hostile" in "tenant-b" contains "CONFINED host-pids"
    # What a container may do still works: its own volume.
    And the log of the Job "hostile" in "tenant-b" contains "ESCAPED volume-write"
    And the log of the Job "hostile" in "tenant-b" contains "uid 0"

  Scenario: a container cannot read another namespace's Secret volume, and its own is its user's alone
    When the following is applied:
      """
      apiVersion: batch/v1
      kind: Job
      metadata: {name: victim, namespace: openstack}
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            securityContext: {fsGroup: 42424}
            volumes: [{name: db, secret: {secretName: barbican-db}}]
            containers:
            - name: victim
              image: ghcr.io/c5c3/barbican:2025.2
              securityContext: {runAsUser: 42424, runAsGroup: 42424, runAsNonRoot: true, capabilities: {drop: [ALL]}}
              volumeMounts: [{name: db, mountPath: /etc/db, readOnly: true}]
              command:
              - sh
              - -c
              - |
                grep -q db-secret-pw /etc/db/password && echo "own secret readable"
                stat -c 'own secret %a %U' /etc/db/password
                stat -c 'own volume %a %U %G' /etc/db
                sleep 120
      """
    Then the log of the Job "victim" in "openstack" contains "own secret readable"
    And the log of the Job "victim" in "openstack" contains "own secret 644 pod"
    And the log of the Job "victim" in "openstack" contains "own volume 750 pod g42424"
    When the following is applied:
      """
      apiVersion: batch/v1
      kind: Job
      metadata: {name: thief, namespace: tenant-b}
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: thief
              image: ghcr.io/c5c3/barbican:2025.2
              command:
              - sh
              - -c
              - |
                if grep -rqs db-secret-pw /tmp /etc /root /var /run 2>/dev/null; then echo "ESCAPED secret"; else echo "CONFINED secret"; fi
                if ls /tmp/barbican-real-* >/dev/null 2>&1; then echo "ESCAPED pod-dirs"; else echo "CONFINED pod-dirs"; fi
      """
    Then the log of the Job "thief" in "tenant-b" contains "CONFINED secret"
    And the log of the Job "thief" in "tenant-b" contains "CONFINED pod-dirs"

  Scenario: an exec probe runs inside the container as its user, not on the host
    When the following is applied:
      """
      apiVersion: batch/v1
      kind: Job
      metadata: {name: probed, namespace: tenant-b}
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            volumes: [{name: shared, emptyDir: {}}]
            containers:
            - name: probed
              image: ghcr.io/c5c3/barbican:2025.2
              securityContext: {runAsUser: 1000, runAsGroup: 1000}
              volumeMounts: [{name: shared, mountPath: /shared}]
              readinessProbe:
                exec: {command: [sh, -c, "id -u > /shared/probe-uid; cat /etc/shadow > /shared/probe-shadow 2>/dev/null || echo no > /shared/probe-shadow"]}
                periodSeconds: 1
              command:
              - sh
              - -c
              - |
                for i in $(seq 60); do
                  if [ -s /shared/probe-uid ]; then echo "probe ran as $(cat /shared/probe-uid), shadow $(head -c2 /shared/probe-shadow)"; exit 0; fi
                  sleep 1
                done
                echo "the probe never ran"; exit 1
      """
    Then the log of the Job "probed" in "tenant-b" contains "probe ran as 1000, shadow no"

  # A failed liveness probe stops the container as deleting its pod would: the preStop hook,
  # then SIGTERM, which the command traps to print what the hook left in the shared emptyDir.
  Scenario: a preStop hook runs inside the container as its user, not on the host
    When the following is applied:
      """
      apiVersion: batch/v1
      kind: Job
      metadata: {name: hooked, namespace: tenant-b}
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            terminationGracePeriodSeconds: 20
            volumes: [{name: shared, emptyDir: {}}]
            containers:
            - name: hooked
              image: ghcr.io/c5c3/barbican:2025.2
              securityContext: {runAsUser: 1000, runAsGroup: 1000}
              volumeMounts: [{name: shared, mountPath: /shared}]
              livenessProbe:
                exec: {command: [sh, -c, "test -e /shared/never"]}
                periodSeconds: 1
                failureThreshold: 1
              lifecycle:
                preStop:
                  exec: {command: [sh, -c, "{ id -u; if head -1 /etc/shadow; then echo ESCAPED; else echo CONFINED; fi; } > /shared/hook 2>/dev/null"]}
              command:
              - sh
              - -c
              - |
                trap 'echo "the hook said: $(cat /shared/hook | tr "\n" " ")"; exit 0' TERM
                while :; do sleep 1; done
      """
    Then the log of the Job "hooked" in "tenant-b" contains "the hook said: 1000 CONFINED"

  # kubernetes.default.svc is the cluster's API over TLS (the CA in kube-root-ca.crt), for
  # service-account tokens only: RBAC decides even where the scenario's own clients are admins.
  Scenario: a container reaches the API only as its service account
    When the following is applied:
      """
      apiVersion: batch/v1
      kind: Job
      metadata: {name: caller, namespace: tenant-b}
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: caller
              image: ghcr.io/c5c3/barbican:2025.2
              securityContext: {runAsUser: 1000}
              command:
              - python
              - -c
              - |
                import os, ssl, urllib.request, urllib.error
                d = "/var/run/secrets/kubernetes.io/serviceaccount"
                base = "https://%s:%s" % (os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"])
                tls = ssl.create_default_context(cafile=d + "/ca.crt")
                token = open(d + "/token").read()
                def code(path, token):
                    request = urllib.request.Request(base + path)
                    if token:
                        request.add_header("Authorization", "Bearer " + token)
                    try:
                        return urllib.request.urlopen(request, context=tls).status
                    except urllib.error.HTTPError as e:
                        return e.code
                print("namespace", open(d + "/namespace").read())
                print("version", code("/version", token))
                for what, path, who in [("other-secrets", "/api/v1/namespaces/openstack/secrets", token),
                                        ("own-secrets", "/api/v1/namespaces/tenant-b/secrets", token),
                                        ("anonymous", "/api/v1/namespaces/tenant-b/pods", None)]:
                    got = code(path, who)
                    print(("CONFINED " if got in (401, 403) else "ESCAPED ") + what, got)
      """
    Then the log of the Job "caller" in "tenant-b" contains "namespace tenant-b"
    And the log of the Job "caller" in "tenant-b" contains "version 200"
    And the log of the Job "caller" in "tenant-b" contains "CONFINED other-secrets 403"
    And the log of the Job "caller" in "tenant-b" contains "CONFINED own-secrets 403"
    And the log of the Job "caller" in "tenant-b" contains "CONFINED anonymous 401"
