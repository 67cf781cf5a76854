@real-barbican @sim-only @installed
Feature: The chart installed with helm runs the operator as its pods

  The README's install commands, run with real helm against the sim served on loopback: the
  chart's two replicas run on the kubelet from the workspace's barbican-operator binary with
  the chart's arguments, its projected ServiceAccount token and its probes; the fake
  cert-manager issues the webhook's certificate and injects its CA, so the API server calls
  the webhook pods through the chart's Service; one replica holds the Lease. Nothing of the
  operator runs in the test's process.

  Background:
    Given a simulated cluster served for helm, without the operator
    # The chart's Roles (the watched namespace's, rbac.secretStoreNamespaces', the target
    # clusters' registrations') go into these namespaces: they must exist.
    And the namespace "openstack"
    And the namespace "c5c3-clusters"
    And helm runs:
      """
      helm install barbican-operator deploy/helm/barbican-operator \
        --namespace barbican-system --create-namespace \
        --set 'watchNamespaces={openstack}' \
        --set 'rbac.secretStoreNamespaces.openstack={openbao-instance}'
      """
    Then within 3 minutes the Deployment "barbican-operator" in "barbican-system" has "/status/readyReplicas" set to "2"
    And within 1 minute the Secret "barbican-operator-webhook-tls" in "barbican-system" exists
    And within 1 minute the Service "barbican-operator-metrics" in "barbican-system" answers "/metrics" on port 8080
    Given the MariaDB "openstack-mariadb" in "openstack" is running
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

  Scenario: the examples converge, a refused CR is refused by the webhook pods, and the leader hands over
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
    # The PriorityClass lookup is the webhook's alone: the CRD's schema cannot read another object.
    Then it is refused with "denied the request"
    And the Barbican "barbican-two" in "openstack" does not exist
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason          |
      | DatabaseReady    | True   | DatabaseSynced  |
      | BarbicanAPIReady | True   | APIHealthy      |
      | Ready            | True   | AllReady        |
    And exactly 1 pod of the Deployment "barbican-operator" in "barbican-system" logged "leading"
    When the pod holding the Lease "barbican-operator-leader" in "barbican-system" is deleted
    Then within 15 seconds the Lease "barbican-operator-leader" in "barbican-system" is held by another running pod
    And exactly 1 pod of the Deployment "barbican-operator" in "barbican-system" logged "leading"
    When the field "spec.deployment.replicas" of the Barbican "barbican" in "openstack" is set to "2"
    Then within 3 minutes the Deployment "barbican" in "openstack" has "/status/readyReplicas" set to "2"
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |

  Scenario: helm upgrade rolls the operator and helm uninstall leaves the Barbicans
    When the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    Then within 5 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When helm runs:
      """
      helm upgrade barbican-operator deploy/helm/barbican-operator -n barbican-system \
        --reuse-values --set logLevel=debug
      """
    Then within 3 minutes the Deployment "barbican-operator" in "barbican-system" has "/status/updatedReplicas" set to "2"
    And within 3 minutes the Deployment "barbican-operator" in "barbican-system" has "/status/readyReplicas" set to "2"
    And the Deployment "barbican-operator" in "barbican-system" has "/spec/template/spec/containers/0/env/2/value" set to "debug"
    When helm runs:
      """
      helm uninstall barbican-operator -n barbican-system
      """
    Then within 1 minute the Deployment "barbican-operator" in "barbican-system" is gone
    # Helm never deletes what crds/ installed; the Barbican and what it runs stay.
    And within 1 minute the Barbican "barbican" in "openstack" exists
    And the Deployment "barbican" in "openstack" has "/status/readyReplicas" set to "3"
