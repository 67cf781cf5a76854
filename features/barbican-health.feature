Feature: The health check reports what the API answers

  The probe goes to the cluster-local Service's /healthcheck. A failure says why and retries
  after 10 seconds; a passing probe is reused for 30 seconds.

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
      | condition        | status | reason     |
      | BarbicanAPIReady | True   | APIHealthy |

  @sim-only
  Scenario: an unhealthy, a silent and a closed API each have their reason, and recovery is seen
    When the barbican API of "barbican" in "openstack" answers unhealthy
    # A healthy Barbican is probed again on the next pass: the periodic resync at the latest.
    And 10 minutes pass
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason       |
      | BarbicanAPIReady | False  | APIUnhealthy |
    # What the chart's BarbicanAPIUnhealthy alert reads.
    And the operator's metric "barbican_operator_condition_status" with "kind=Barbican,name=barbican,namespace=openstack,condition=BarbicanAPIReady" reads 0
    When the barbican API of "barbican" in "openstack" answers nothing
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason           |
      | BarbicanAPIReady | False  | ConnectionFailed |
    When the barbican API of "barbican" in "openstack" answers slowly
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason             |
      | BarbicanAPIReady | False  | HealthCheckTimeout |
    When the barbican API of "barbican" in "openstack" answers healthy
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason     |
      | BarbicanAPIReady | True   | APIHealthy |
    And the operator's metric "barbican_operator_condition_status" with "kind=Barbican,name=barbican,namespace=openstack,condition=BarbicanAPIReady" reads 1
