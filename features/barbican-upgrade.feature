Feature: Release upgrades go one step at a time, with the clean-up paused during the migration

  A release bump moves spec.openStackRelease and spec.image together. The gate checks it
  against status.installedRelease before any Job runs; an accepted bump runs the db-sync Job on
  the new image while the db-clean CronJob is suspended, then promotes installedRelease.

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
    And the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
      | Ready         | True   | AllReady       |

  @sim-only
  Scenario: an accepted bump migrates on the new image and promotes the release afterwards
    Given Jobs follow the rule "name=*-db-sync:complete:2m"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.1", image: {tag: "2026.1"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason           |
      | DatabaseReady | False  | DBSyncInProgress |
      | DBCleanReady  | True   | DBCleanSuspended |
    And the Barbican "barbican" in "openstack" has "/status/targetRelease" set to "2026.1"
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.2"
    And the Job "barbican-db-sync" in "openstack" has "/spec/template/spec/containers/0/image" set to "ghcr.io/c5c3/barbican:2026.1"
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/suspend" set to "true"
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason           |
      | DatabaseReady | True   | DatabaseSynced   |
      | DBCleanReady  | True   | DBCleanScheduled |
      | Ready         | True   | AllReady         |
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2026.1"
    And the Barbican "barbican" in "openstack" has "/status/installedImage" set to "ghcr.io/c5c3/barbican:2026.1"
    And the Barbican "barbican" in "openstack" has no "/status/targetRelease"
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/suspend" set to "false"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/image" set to "ghcr.io/c5c3/barbican:2026.1"
    And within 1 minute a Normal event "DatabaseSynced" about "barbican" in "openstack" mentions "2026.1"

  Scenario: a downgrade is refused and the clean-up reports itself blocked
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2025.1", image: {tag: "2025.1"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason                |
      | DatabaseReady | False  | DowngradeNotSupported |
      | DBCleanReady  | False  | DBCleanBlocked        |
      | Ready         | False  | NotAllReady           |
    And within 1 minute a Warning event "DowngradeNotSupported" about "barbican" in "openstack" mentions "2025.1"
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.2"

  Scenario: a jump over a release is refused
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.2", image: {tag: "2026.2"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason              |
      | DatabaseReady | False  | UpgradePathInvalid  |
    And within 1 minute a Warning event "UpgradePathInvalid" about "barbican" in "openstack" mentions "2026.1"

  Scenario: an unparseable installed release is refused
    When the status of the Barbican "barbican" in "openstack" is patched with:
      """
      status: {installedRelease: "yoga"}
      """
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.1", image: {tag: "2026.1"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason            |
      | DatabaseReady | False  | VersionParseError |
    And within 1 minute a Warning event "VersionParseError" about "barbican" in "openstack" mentions "yoga"

  Scenario: a tag naming another release is refused before any Job
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.1"}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason               |
      | DatabaseReady | False  | ImageReleaseMismatch |
    And within 1 minute the DatabaseReady condition of the Barbican "barbican" in "openstack" mentions "names release 2025.2"
    And the Barbican "barbican" in "openstack" has no "/status/targetRelease"

  Scenario: a release bump that leaves a digest-pinned image untouched is refused
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {image: {tag: null, digest: "sha256:1111111111111111111111111111111111111111111111111111111111111111"}}
      """
    Then within 2 minutes the Barbican "barbican" in "openstack" has "/status/installedImage" set to "ghcr.io/c5c3/barbican@sha256:1111111111111111111111111111111111111111111111111111111111111111"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.1"}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason               |
      | DatabaseReady | False  | ImageReleaseMismatch |
    And within 1 minute a Warning event "ImageReleaseMismatch" about "barbican" in "openstack" mentions "spec.image is still"

  @sim-only
  Scenario: a failed migration is reported, and a fixed image runs a new Job
    Given Jobs follow the rule "name=*-db-sync:fail"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.1", image: {tag: "2026.1"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason       |
      | DatabaseReady | False  | DBSyncFailed |
    And within 1 minute a Warning event "DBSyncFailed" about "barbican" in "openstack" mentions "barbican-db-sync"
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.2"
    When Jobs follow the rule "name=*-db-sync:complete"
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {image: {tag: "2026.1-p1"}}
      """
    Then within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2026.1"
    And the Barbican "barbican" in "openstack" has "/status/installedImage" set to "ghcr.io/c5c3/barbican:2026.1-p1"

  @sim-only
  Scenario: a restart mid-migration neither promotes early nor counts the Job twice
    Given Jobs follow the rule "name=*-db-sync:complete:2m"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.1", image: {tag: "2026.1"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason           |
      | DatabaseReady | False  | DBSyncInProgress |
    When the operator restarts
    And 1 minute passes
    Then the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.2"
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2026.1"
    And the operator has counted 1 db-sync Job for the Barbican "barbican" in "openstack"
    When the operator restarts
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition       | status | reason          |
      | DeploymentReady | True   | DeploymentReady |
      | Ready           | True   | AllReady        |
    And a full pass over the Barbican "barbican" in "openstack" writes nothing
    And the operator has counted 0 db-sync Jobs for the Barbican "barbican" in "openstack"

  @sim-only
  Scenario: a migration that failed on a database outage is retried until it runs, with no human step
    Given Jobs follow the rule "name=*-db-sync:fail"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {openStackRelease: "2026.1", image: {tag: "2026.1"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason       |
      | DatabaseReady | False  | DBSyncFailed |
    And within 1 minute the DatabaseReady condition of the Barbican "barbican" in "openstack" mentions "(attempt 1)"
    And within 1 minute the DatabaseReady condition of the Barbican "barbican" in "openstack" mentions "attempt 2 runs at"
    Then within 3 minutes the DatabaseReady condition of the Barbican "barbican" in "openstack" mentions "attempt 3 runs at"
    And the Job "barbican-db-sync" in "openstack" has "/metadata/annotations/barbican.c5c3.io~1db-sync-attempt" set to "2"
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2025.2"
    When Jobs follow the rule "name=*-db-sync:complete"
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
      | Ready         | True   | AllReady       |
    And the Barbican "barbican" in "openstack" has "/status/installedRelease" set to "2026.1"
    And the Job "barbican-db-sync" in "openstack" has "/metadata/annotations/barbican.c5c3.io~1db-sync-attempt" set to "3"
    And the operator has counted 4 db-sync Jobs for the Barbican "barbican" in "openstack"

  Scenario: a tag that names another release never reaches the clean-up CronJob
    Then within 1 minute the CronJob "barbican-db-clean" in "openstack" has "/spec/jobTemplate/spec/template/spec/containers/0/image" set to "ghcr.io/c5c3/barbican:2025.2"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {image: {tag: "2026.1"}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason               |
      | DatabaseReady | False  | ImageReleaseMismatch |
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/jobTemplate/spec/template/spec/containers/0/image" set to "ghcr.io/c5c3/barbican:2025.2"
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/suspend" set to "false"
