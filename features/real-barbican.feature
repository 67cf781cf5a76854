@real-barbican @sim-only
Feature: Real barbican in the loop

  The sim's kubelet runs the Deployment's and the Jobs' pods as real processes: uwsgi serving
  barbican's WSGI application with the command, environment and mounted config the operator
  renders, `barbican-manage db upgrade` migrating a real MariaDB, all from a virtualenv of the
  release. Run by `features/tests/real_barbican.rs` on the wall clock.

  Background:
    Given a simulated cluster with the operator running
    And the namespace "openstack"
    And the MariaDB "openstack-mariadb" in "openstack" is running
    And the External Secrets ClusterSecretStore "openbao-cluster-store" is ready
    And the Secret "barbican-db" in "openstack" holds:
      | key      | value        |
      | username | barbican     |
      | password | db-secret-pw |
    And the Secret "barbican-keystone" in "openstack" holds:
      | key      | value            |
      | password | keystone-user-pw |
    And the OpenBaoCluster "openbao-instance" in "openstack" is running
    And the Keystone user "barbican" with the password "keystone-user-pw" has the role "service" on the project "service"
    # Storing a secret takes the member role where barbican enforces its new policy defaults
    # (2026.2), the creator role under the legacy rules (2025.2).
    And the Keystone user "alice" with the password "alice-pw" has the roles "member,creator" on the project "demo"

  # The longest scenarios come first: the runner runs three at a time, and one of these
  # started last held the run back by its whole length (they wait on real Jobs' backoff).

  # barbican 2025.1 to 2026.2 carry no schema migration of their own, so the migration that goes
  # wrong is staged: the upgrade's db-sync fails on a config barbican-manage cannot load, and
  # what a migration stopped halfway leaves behind (a secret's row marked deleted) is written
  # into the database after the dump. The dump taken before db-sync, loaded back as an
  # administrator would, brings the secret back once the release is pinned back.
  Scenario: a failed migration is undone from the dump spec.dbBackup took before it
    When the example "barbicansecretstore-managed.yaml" is applied
    And the following is applied:
      """
      apiVersion: v1
      kind: PersistentVolumeClaim
      metadata: {name: barbican-db-backups, namespace: openstack}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
      ---
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: openstack}
      spec:
        openStackRelease: "2025.1"
        deployment: {replicas: 2}
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.1"}
        database:
          clusterRef: {name: openstack-mariadb}
          database: barbican
          secretRef: {name: barbican-db}
        cache:
          clusterRef: {name: openstack-memcached}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser:
          secretRef: {name: barbican-keystone}
        dbBackup:
          persistentVolumeClaim: {claimName: barbican-db-backups}
          keep: 2
      """
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the user "alice" with the password "alice-pw" of the project "demo" stores the secret "before-the-migration" in the Barbican "barbican" in "openstack"
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        openStackRelease: "2025.2"
        image: {tag: "2025.2"}
        extraConfig:
          DEFAULT: {debug: not-a-boolean}
      """
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason       |
      | DatabaseReady | False  | DBSyncFailed |
    And the claim "barbican-db-backups" in "openstack" holds 1 dump of the Barbican "barbican"
    And the log of the Job "barbican-db-backup" in "openstack" contains "dumped barbican to /backups/barbican/"
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.1"
    When the real MariaDB runs "UPDATE barbican.secrets SET deleted = 1, status = 'DELETED' WHERE name = 'before-the-migration'"
    Then the user "alice" with the password "alice-pw" of the project "demo" finds the secret "before-the-migration" gone from the Barbican "barbican" in "openstack"
    When the newest dump of the Barbican "barbican" on the claim "barbican-db-backups" in "openstack" is loaded into the real MariaDB
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        openStackRelease: "2025.1"
        image: {tag: "2025.1"}
        extraConfig: null
      """
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
      | Ready         | True   | AllReady       |
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.1"
    And the user "alice" with the password "alice-pw" of the project "demo" reads the secret "before-the-migration" back from the Barbican "barbican" in "openstack"

  # The Job's pod takes seconds to import barbican before it connects; the server stops within
  # milliseconds of the Job appearing.
  Scenario: MariaDB stopped under the migration fails its pod, and the Barbican heals once it is back
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 2 minutes the Job "barbican-db-sync" in "openstack" exists
    When the real MariaDB server is stopped
    Then within 5 minutes the Job "barbican-db-sync" in "openstack" has "/status/failed" set to "1"
    And the log of the Job "barbican-db-sync" in "openstack" contains "SQL connection failed"
    When the real MariaDB server starts again
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
      | Ready         | True   | AllReady       |
    # The Job completed with its second pod and still counts the first one's failure, as
    # the Job controller does.
    And the Job "barbican-db-sync" in "openstack" has "/status/succeeded" set to "1"
    And the Job "barbican-db-sync" in "openstack" has "/status/failed" set to "1"

  # The first secret ID lives three minutes: re-minted at two thirds of that, after the first
  # rollout has settled even on a loaded machine (with 90 s ones the re-mint every minute
  # rolled the pods again before three real barbican pods were up, and Ready never came).
  Scenario: a proactive re-mint rolls the pods and a secret stored before it still reads back
    Given the OpenBao of "openbao-instance" in "openstack" issues secret IDs for 180 seconds
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the user "alice" with the password "alice-pw" of the project "demo" stores the secret "before-the-re-mint" in the Barbican "barbican" in "openstack"
    And the secret ID of the store "openbao-primary" in "openstack" is noted
    And the pod template of the Deployment "barbican" in "openstack" is noted
    # The next secret ID lives an hour: one roll, then quiet.
    And the OpenBao of "openbao-instance" in "openstack" issues secret IDs for 3600 seconds
    Then within 3 minutes the pods of the Deployment "barbican" in "openstack" roll
    And the secret ID of the store "openbao-primary" in "openstack" has changed
    And the operator counted 1 proactive and 0 reactive re-mints of the store "openbao-primary" in "openstack"
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition       | status | reason          |
      | DeploymentReady | True   | DeploymentReady |
      | Ready           | True   | AllReady        |
    And the user "alice" with the password "alice-pw" of the project "demo" reads the secret "before-the-re-mint" back from the Barbican "barbican" in "openstack"
    And the OpenBao of "openbao-instance" in "openstack" holds the secret "before-the-re-mint" under the mount "barbican", written after a login with the secret ID of the store "openbao-primary"

  Scenario: the minimal example reaches Ready with real barbican answering its healthcheck
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason          |
      | DatabaseReady    | True   | DatabaseSynced  |
      | DeploymentReady  | True   | DeploymentReady |
      | BarbicanAPIReady | True   | APIHealthy      |
      | Ready            | True   | AllReady        |
    And the log of the Job "barbican-db-sync" in "openstack" contains "Running upgrade"
    And the log of a pod of the Deployment "barbican" in "openstack" contains "uWSGI worker"

  Scenario: a secret stored through barbican's API lands in OpenBao with the minted AppRole and reads back
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the user "alice" with the password "alice-pw" of the project "demo" stores the secret "s3cr3t-payload" in the Barbican "barbican" in "openstack"
    Then the OpenBao of "openbao-instance" in "openstack" holds the secret "s3cr3t-payload" under the mount "barbican", written after a login with the secret ID of the store "openbao-primary"
    And the user "alice" with the password "alice-pw" of the project "demo" reads the secret "s3cr3t-payload" back from the Barbican "barbican" in "openstack"

  # uWSGI serves HTTPS with the certificate cert-manager issued; the client verifies it against
  # the issuer's CA for the Service's name, and barbican hands out https references (host_href).
  Scenario: with spec.tls, a secret is stored and read over HTTPS verified by the issuer's CA
    When the following is applied:
      """
      apiVersion: cert-manager.io/v1
      kind: Issuer
      metadata: {name: selfsigned, namespace: openstack}
      spec: {selfSigned: {}}
      ---
      apiVersion: cert-manager.io/v1
      kind: Certificate
      metadata: {name: openstack-ca, namespace: openstack}
      spec: {isCA: true, commonName: openstack-ca, secretName: openstack-ca, issuerRef: {name: selfsigned}}
      ---
      apiVersion: cert-manager.io/v1
      kind: Issuer
      metadata: {name: openstack-ca, namespace: openstack}
      spec: {ca: {secretName: openstack-ca}}
      """
    And the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    And the field "spec.tls.issuerRef.name" of the Barbican "barbican" in "openstack" is set to "openstack-ca"
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason              |
      | TLSReady         | True   | TLSCertificateReady |
      | BarbicanAPIReady | True   | APIHealthy          |
      | Ready            | True   | AllReady            |
    And the log of a pod of the Deployment "barbican" in "openstack" contains "https"
    When the user "alice" with the password "alice-pw" of the project "demo" stores the secret "tls-payload" in the Barbican "barbican" in "openstack"
    Then the reference barbican gave the secret "tls-payload" starts with "https://barbican.openstack.svc.cluster.local:9311/v1/secrets/"
    And the user "alice" with the password "alice-pw" of the project "demo" reads the secret "tls-payload" back from the Barbican "barbican" in "openstack"

  # keystonemiddleware's audit filter records each request as CADF events; the log driver writes
  # them as JSON through oslo.messaging's logger `oslo.messaging.notification.audit.http.*`.
  Scenario: with spec.audit, reading a secret is recorded as a CADF event in barbican's log
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    And the field "spec.audit.driver" of the Barbican "barbican" in "openstack" is set to "log"
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And within 1 minute the barbican.conf mounted by the Deployment "barbican" in "openstack" sets [audit_middleware_notifications] driver to "log"
    When the user "alice" with the password "alice-pw" of the project "demo" stores the secret "audited-payload" in the Barbican "barbican" in "openstack"
    Then the user "alice" with the password "alice-pw" of the project "demo" reads the secret "audited-payload" back from the Barbican "barbican" in "openstack"
    And the log of a pod of the Deployment "barbican" in "openstack" contains "oslo.messaging.notification.audit.http.response"
    And the log of a pod of the Deployment "barbican" in "openstack" contains '"typeURI": "http://schemas.dmtf.org/cloud/audit/1.0/event"'
    And the log of a pod of the Deployment "barbican" in "openstack" contains '"action": "read"'
    And the log of a pod of the Deployment "barbican" in "openstack" contains '"action": "create"'

  # A Barbican has one OpenBao store (a second one is MultipleOpenBaoStores), so detaching is
  # deleting it: the last-good configuration keeps serving what the store holds.
  Scenario: a detached store leaves the running barbican serving the secrets it holds
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the user "alice" with the password "alice-pw" of the project "demo" stores the secret "kept-after-detach" in the Barbican "barbican" in "openstack"
    And the BarbicanSecretStore "openbao-primary" in "openstack" is deleted
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason               |
      | SecretStoresReady | False  | NoDefaultSecretStore |
    And the user "alice" with the password "alice-pw" of the project "demo" reads the secret "kept-after-detach" back from the Barbican "barbican" in "openstack"

  Scenario: an upgrade from 2025.1 to 2025.2 migrates with the new release and keeps the secrets
    When the example "barbicansecretstore-managed.yaml" is applied
    And the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: openstack}
      spec:
        openStackRelease: "2025.1"
        deployment: {replicas: 2}
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.1"}
        database:
          clusterRef: {name: openstack-mariadb}
          database: barbican
          secretRef: {name: barbican-db}
        cache:
          clusterRef: {name: openstack-memcached}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser:
          secretRef: {name: barbican-keystone}
      """
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And within 1 minute the Barbican "barbican" in "openstack" answers "/?build" with "20.0.0"
    When the user "alice" with the password "alice-pw" of the project "demo" stores the secret "before-the-upgrade" in the Barbican "barbican" in "openstack"
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2025.2", image: {tag: "2025.2"}}
      """
    Then within 5 minutes the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.2"
    And the Job "barbican-db-sync" in "openstack" has "/spec/template/spec/containers/0/image" set to "ghcr.io/c5c3/barbican:2025.2"
    And the log of the Job "barbican-db-sync" in "openstack" contains "Context impl MySQLImpl"
    And within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And within 5 minutes the Barbican "barbican" in "openstack" answers "/?build" with "21.0.0"
    And the user "alice" with the password "alice-pw" of the project "demo" reads the secret "before-the-upgrade" back from the Barbican "barbican" in "openstack"

  Scenario: the db-clean CronJob's command runs against the real schema
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason           |
      | DBCleanReady | True   | DBCleanScheduled |
      | Ready        | True   | AllReady         |
    When a Job "db-clean-now" is created from the CronJob "barbican-db-clean" in "openstack"
    Then within 3 minutes the Job "db-clean-now" in "openstack" reports:
      | condition | status | reason             |
      | Complete  | True   | CompletionsReached |
    And the log of the Job "db-clean-now" in "openstack" contains "DB clean up finished"
