Feature: The parallel group exposes, scales and fences the API

  HTTPRoute, HPA and NetworkPolicy each own one condition and always set it; the block going
  away deletes what it created.

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

  Scenario: a gateway block creates a route the Gateway accepts, and removing it deletes it
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        gateway:
          hostname: kms.example.com
          parentRef: {name: public, namespace: gateways}
          path: key-manager
          annotations: {example.com/rate-limit: "100"}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition      | status | reason            |
      | HTTPRouteReady | True   | HTTPRouteAccepted |
    And the HTTPRoute "barbican" in "openstack" has "/spec/rules/0/matches/0/path/value" set to "/key-manager"
    And the HTTPRoute "barbican" in "openstack" has "/metadata/annotations/example.com~1rate-limit" set to "100"
    And the Barbican "barbican" in "openstack" reports the endpoint "https://kms.example.com"
    When the Gateway refuses the HTTPRoute "barbican" in "openstack"
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition      | status | reason               |
      | HTTPRouteReady | False  | HTTPRouteNotAccepted |
    When the Gateway accepts the HTTPRoute "barbican" in "openstack"
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition      | status | reason            |
      | HTTPRouteReady | True   | HTTPRouteAccepted |
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        gateway: null
      """
    Then within 1 minute the HTTPRoute "barbican" in "openstack" is gone
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition      | status | reason               |
      | HTTPRouteReady | True   | HTTPRouteNotRequired |

  Scenario: autoscaling creates an HPA bounded by the block and removing it deletes it
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        autoscaling: {maxReplicas: 6, targetCPUUtilization: 70}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | HPAReady  | True   | HPAReady |
    And the HorizontalPodAutoscaler "barbican" in "openstack" has "/spec/minReplicas" set to "3"
    And the HorizontalPodAutoscaler "barbican" in "openstack" has "/spec/maxReplicas" set to "6"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        autoscaling: null
      """
    Then within 1 minute the HorizontalPodAutoscaler "barbican" in "openstack" is gone
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition | status | reason         |
      | HPAReady  | True   | HPANotRequired |

  Scenario: a network policy admits the listed sources and derives the egress
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        networkPolicy:
          ingress:
            - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ingress}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason             |
      | NetworkPolicyReady | True   | NetworkPolicyReady |
    And the NetworkPolicy "barbican" in "openstack" has "/spec/ingress/0/ports/0/port" set to "9311"
    And the NetworkPolicy "barbican" in "openstack" has "/spec/egress/1/ports/0/port" set to "3306"
    And the NetworkPolicy "barbican" in "openstack" has "/spec/egress/2/ports/0/port" set to "5000"
    And the NetworkPolicy "barbican" in "openstack" has "/spec/egress/4/ports/0/port" set to "8200"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        networkPolicy: null
      """
    Then within 1 minute the NetworkPolicy "barbican" in "openstack" is gone
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason                   |
      | NetworkPolicyReady | True   | NetworkPolicyNotRequired |

  @sim-only
  Scenario: the egress to OpenBao stays on the last-good projection when the store goes away
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        networkPolicy:
          ingress:
            - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ingress}}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition          | status | reason             |
      | NetworkPolicyReady | True   | NetworkPolicyReady |
    And the NetworkPolicy "barbican" in "openstack" has "/spec/egress/4/ports/0/port" set to "8200"
    When the BarbicanSecretStore "openbao-primary" in "openstack" is deleted
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition         | status | reason               |
      | SecretStoresReady | False  | NoDefaultSecretStore |
    And for 2 minutes the NetworkPolicyReady condition of the Barbican "barbican" in "openstack" never reads False
    And the NetworkPolicy "barbican" in "openstack" has "/spec/egress/4/ports/0/port" set to "8200"
    And within 1 minute the barbican.conf mounted by the Deployment "barbican" in "openstack" sets [secretstore:openbao-primary] secret_store_plugin to "vault_plugin"
