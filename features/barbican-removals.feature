Feature: A field taken out of a Barbican leaves its children

  The operator applies its children with server-side apply. A field it set and no longer sets
  must be applied away: the children after an edit equal what a fresh install of the edited
  spec produces, not the union of every spec they ever had.

  Background:
    Given a simulated cluster with the operator running
    And the namespace "openstack"
    And the MariaDB "openstack-mariadb" in "openstack" is running
    And the External Secrets ClusterSecretStore "openbao-cluster-store" is ready
    And the Secret "barbican-db" in "openstack" holds:
      | key      | value    |
      | username | barbican |
      | password | pw       |
    And the Secret "barbican-keystone" in "openstack" holds:
      | key      | value |
      | password | pw    |
    And the OpenBaoCluster "openbao-instance" in "openstack" is running
    And the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |

  @sim-only
  Scenario: a priority class and a resource limit taken out of the spec leave the Deployment
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        deployment:
          priorityClassName: high
          resources:
            limits: {memory: 512Mi, ephemeral-storage: 1Gi}
            requests: {cpu: 100m, memory: 256Mi}
      """
    Then within 1 minute the Deployment "barbican" in "openstack" has "/spec/template/spec/priorityClassName" set to "high"
    And within 1 minute the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/resources/limits/ephemeral-storage" set to "1Gi"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        deployment:
          priorityClassName: null
          resources:
            limits: {ephemeral-storage: null}
      """
    And 1 minute passes
    Then the Deployment "barbican" in "openstack" has no "/spec/template/spec/priorityClassName"
    And the Deployment "barbican" in "openstack" has no "/spec/template/spec/containers/0/resources/limits/ephemeral-storage"
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And a full pass over the Barbican "barbican" in "openstack" writes nothing
