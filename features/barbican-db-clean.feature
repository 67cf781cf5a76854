Feature: The db-clean CronJob hard-deletes what barbican soft-deleted

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

  @sim-only
  Scenario: the clean-up runs on its schedule and a failed run is reported
    Given Jobs follow the rule "name=barbican-db-clean-*:fail"
    When the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason           |
      | DBCleanReady | True   | DBCleanScheduled |
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/schedule" set to "1 0 * * *"
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/jobTemplate/spec/template/spec/containers/0/command/4" set to "90"
    When 2 minutes pass
    Then within 15 minutes the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason           |
      | DBCleanReady | False  | DBCleanJobFailed |
      | Ready        | False  | NotAllReady      |
    And within 1 minute a Warning event "DBCleanJobFailed" about "barbican" in "openstack" mentions "barbican-db-clean-"

  Scenario: a suspended clean-up says so and stays ready
    When the example "barbican.yaml" is applied
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {dbClean: {suspend: true, retentionDays: 30}}
      """
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason           |
      | DBCleanReady | True   | DBCleanSuspended |
      | Ready        | True   | AllReady         |
    And within 1 minute the CronJob "barbican-db-clean" in "openstack" has "/spec/suspend" set to "true"
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/jobTemplate/spec/template/spec/containers/0/command/4" set to "30"
