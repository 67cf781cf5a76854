Feature: Every CR passes the chart's admission webhooks, as on a real install

  The scenarios run behind the webhook configurations the Helm chart renders, served by the
  operator's webhook server over TLS. The mutating webhook fills in the defaults; the
  validating webhook refuses what the spec forbids and names the field and what is allowed.
  A write that changes no spec (a label, a finalizer) skips both.

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

  Scenario: the defaulting webhooks fill in what a Barbican and a store leave out
    Then the Barbican "barbican" in "openstack" has "/spec/cache/backend" set to "dogpile.cache.pymemcache"
    And the Barbican "barbican" in "openstack" has "/spec/serviceUser/username" set to "barbican"
    And the Barbican "barbican" in "openstack" has "/spec/serviceUser/secretRef/key" set to "password"
    And the Barbican "barbican" in "openstack" has "/spec/deployment/resources/requests/cpu" set to "100m"
    And the BarbicanSecretStore "openbao-primary" in "openstack" has "/spec/openBao/kvMountpoint" set to "barbican"

  # @in-process-operator: its leak check searches the operator's metrics registry and captured log.
  @in-process-operator
  Scenario: a Barbican the spec forbids is refused with the field and what is allowed
    When the following is submitted:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican-two, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database: {clusterRef: {name: openstack-mariadb}, database: barbican, secretRef: {name: barbican-db}}
        cache: {clusterRef: {name: openstack-memcached}}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser: {secretRef: {name: barbican-keystone}}
        deployment: {priorityClassName: no-such-class}
      """
    Then it is refused with "spec.deployment.priorityClassName"
    And the Barbican "barbican-two" in "openstack" does not exist
    When the following is submitted:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican-two, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database: {clusterRef: {name: openstack-mariadb}, database: barbican, secretRef: {name: barbican-db}}
        cache: {clusterRef: {name: openstack-memcached}}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser: {secretRef: {name: barbican-keystone}}
        plugins:
          - {name: vault, configSection: VAULT_PLUGIN, config: {root_token_id: s.planted-root-token}}
      """
    Then it is refused with "root_token_id is managed through the operator"
    And "s.planted-root-token" appears nowhere in "openstack"

  Scenario: an update the spec forbids is refused, and the stored Barbican keeps running
    When the following is submitted:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database: {clusterRef: {name: openstack-mariadb}, database: barbican, secretRef: {name: barbican-db}}
        cache: {clusterRef: {name: openstack-memcached}}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser: {secretRef: {name: barbican-keystone}}
        deployment:
          replicas: 3
          topologySpreadConstraints:
            - maxSkew: 1
              topologyKey: topology.kubernetes.io/zone
              whenUnsatisfiable: ScheduleAnyway
              labelSelector: {matchLabels: {app: something-else}}
      """
    Then it is refused with "must select this Barbican's API pods"
    And the Barbican "barbican" in "openstack" has no "/spec/deployment/topologySpreadConstraints"
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |

  Scenario: a second default store and a second OpenBao store are refused
    Given the OpenBaoCluster "openbao-next-instance" in "openstack" is running
    When the following is submitted:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: openbao-next, namespace: openstack}
      spec:
        barbicanRef: {name: barbican}
        type: OpenBao
        isDefault: true
        openBao:
          instanceRef: {name: openbao-next-instance}
      """
    Then it is refused with "is already the default of Barbican barbican"
    When the following is submitted:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: openbao-next, namespace: openstack}
      spec:
        barbicanRef: {name: barbican}
        type: OpenBao
        openBao:
          instanceRef: {name: openbao-next-instance}
      """
    Then it is refused with "a Barbican has one OpenBao store"
    And the BarbicanSecretStore "openbao-next" in "openstack" does not exist

  Scenario: a write that changes no spec skips the webhooks
    When the following is submitted:
      """
      apiVersion: scheduling.k8s.io/v1
      kind: PriorityClass
      metadata: {name: barbican-critical}
      value: 1000000
      """
    Then it is admitted
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {deployment: {priorityClassName: barbican-critical}}
      """
    Then within 1 minute the Deployment "barbican" in "openstack" has "/spec/template/spec/priorityClassName" set to "barbican-critical"
    When the PriorityClass "barbican-critical" in "" is deleted
    And the Barbican "barbican" in "openstack" is patched with:
      """
      metadata: {labels: {team: key-management}}
      """
    Then the Barbican "barbican" in "openstack" has "/metadata/labels/team" set to "key-management"
