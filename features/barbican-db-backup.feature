Feature: A dump of the database comes before every migration

  Downgrades are refused, so a migration that goes wrong has no way back but the data as it was
  before it. With spec.dbBackup, a db-sync that migrates the installed schema to another release
  or image waits for the {name}-db-backup Job to mariadb-dump the database onto the
  PersistentVolumeClaim it names, keeping the newest dumps. A first install and a db-sync that
  only reruns for a changed config take none.

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
    And the following is applied:
      """
      apiVersion: v1
      kind: PersistentVolumeClaim
      metadata: {name: barbican-db-backups, namespace: openstack}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
      """
    And the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        dbBackup:
          persistentVolumeClaim: {claimName: barbican-db-backups}
          keep: 2
      """
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
      | Ready         | True   | AllReady       |

  @sim-only
  Scenario: an upgrade waits for the dump, then migrates, and a first install took none
    Given Jobs follow the rule "name=*-db-backup:complete:2m"
    Then the Job "barbican-db-backup" in "openstack" does not exist
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.1", image: {tag: "2026.1"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason             |
      | DatabaseReady | False  | DBBackupInProgress |
      | DBCleanReady  | True   | DBCleanSuspended   |
    And within 1 minute the DatabaseReady condition of the Barbican "barbican" in "openstack" mentions "before the migration from 2025.2 (ghcr.io/c5c3/barbican:2025.2) to 2026.1 (ghcr.io/c5c3/barbican:2026.1)"
    And the Job "barbican-db-sync" in "openstack" has "/spec/template/spec/containers/0/image" set to "ghcr.io/c5c3/barbican:2025.2"
    And the Job "barbican-db-backup" in "openstack" has "/spec/template/spec/volumes/0/persistentVolumeClaim/claimName" set to "barbican-db-backups"
    And the Job "barbican-db-backup" in "openstack" has "/spec/template/spec/containers/0/env/2/value" set to "2025.2"
    And the Job "barbican-db-backup" in "openstack" has "/spec/template/spec/containers/0/env/8/valueFrom/secretKeyRef/name" set to "barbican-db"
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.2"
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
      | Ready         | True   | AllReady       |
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2026.1"
    And the Job "barbican-db-sync" in "openstack" has "/spec/template/spec/containers/0/image" set to "ghcr.io/c5c3/barbican:2026.1"

  @sim-only
  Scenario: a failed dump holds the migration and is retried; the schema stays where it was
    Given Jobs follow the rule "name=*-db-backup:fail"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.1", image: {tag: "2026.1"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | False  | DBBackupFailed |
      | Ready         | False  | NotAllReady    |
    And within 1 minute a Warning event "DBBackupFailed" about "barbican" in "openstack" mentions "barbican-db-backup failed (attempt 1)"
    And the Job "barbican-db-sync" in "openstack" has "/spec/template/spec/containers/0/image" set to "ghcr.io/c5c3/barbican:2025.2"
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.2"
    When Jobs follow the rule "name=*-db-backup:complete"
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
      | Ready         | True   | AllReady       |
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2026.1"

  Scenario: without its claim the migration waits, and says for what
    When the PersistentVolumeClaim "barbican-db-backups" in "openstack" is deleted
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.1", image: {tag: "2026.1"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason                 |
      | DatabaseReady | False  | WaitingForBackupVolume |
    And within 1 minute the DatabaseReady condition of the Barbican "barbican" in "openstack" mentions "named by spec.dbBackup does not exist; the migration from 2025.2"
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.2"
    When the following is applied:
      """
      apiVersion: v1
      kind: PersistentVolumeClaim
      metadata: {name: barbican-db-backups, namespace: openstack}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
      """
    Then within 3 minutes the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2026.1"

  Scenario: a config change reruns db-sync without a dump
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        extraConfig:
          DEFAULT: {max_allowed_secret_in_bytes: "30000"}
      """
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
      | Ready         | True   | AllReady       |
    And the Job "barbican-db-backup" in "openstack" does not exist
