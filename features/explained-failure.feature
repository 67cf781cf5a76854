@explained-failure
Feature: A scenario that fails on purpose, to show what a failure prints

  Kept out of the default run: `FEATURES_TAGS=@explained-failure cargo test -p barbican-features
  --test features -- explained-failure` runs it. The Barbican waits for its database Secret,
  which never comes, while the scenario expects it Ready. The failure prints the expected and
  actual condition tables, then every Barbican and store as a condition table and as YAML, the
  operator's last log lines about each, and the newest events.

  Scenario: a Barbican expected Ready while its database Secret is missing
    Given a simulated cluster with the operator running
    And the namespace "openstack"
    And the MariaDB "openstack-mariadb" in "openstack" is running
    And the External Secrets ClusterSecretStore "openbao-cluster-store" is ready
    And the Secret "barbican-keystone" in "openstack" holds:
      | key      | value            |
      | password | keystone-user-pw |
    When the example "barbican.yaml" is applied
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition    | status | reason           |
      | SecretsReady | True   | SecretsAvailable |
      | Ready        | True   | AllReady         |
