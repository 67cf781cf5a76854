Feature: The database: managed, brownfield and dynamic credentials, outages and teardown

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

  Scenario: a managed database gets a Database, a User sized for the topology, and a Grant
    When the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
    And the Database "barbican" in "openstack" has "/spec/name" set to "barbican"
    And the User "barbican" in "openstack" has "/spec/maxUserConnections" set to "10"
    And the Grant "barbican" in "openstack" has "/spec/username" set to "barbican"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {apiServer: {uwsgi: {processes: 4}}}
      """
    Then within 1 minute the User "barbican" in "openstack" has "/spec/maxUserConnections" set to "18"

  Scenario: a brownfield database needs no mariadb-operator resources
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database: {host: db.example.com, port: 3307, database: barbican, secretRef: {name: barbican-db}}
        cache: {servers: ["memcached-0.example.com:11211"]}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser: {secretRef: {name: barbican-keystone, key: password}}
      """
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
      | Ready         | True   | AllReady       |
    And the Database "barbican" in "openstack" does not exist
    And the User "barbican" in "openstack" does not exist

  Scenario: dynamic credentials get a Database but no User or Grant
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: barbican, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database: {clusterRef: {name: openstack-mariadb}, database: barbican, secretRef: {name: barbican-db}, credentialsMode: Dynamic}
        cache: {clusterRef: {name: openstack-memcached}}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser: {secretRef: {name: barbican-keystone, key: password}}
      """
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
    And within 1 minute the Database "barbican" in "openstack" exists
    And the User "barbican" in "openstack" does not exist
    And the Grant "barbican" in "openstack" does not exist

  Scenario: a MariaDB outage shows in DatabaseReady and clears when it comes back
    When the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    When the MariaDB "openstack-mariadb" in "openstack" goes down
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason          |
      | DatabaseReady | False  | ClusterNotReady |
      | Ready         | False  | NotAllReady     |
    When the MariaDB "openstack-mariadb" in "openstack" comes back
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition     | status | reason         |
      | DatabaseReady | True   | DatabaseSynced |
      | Ready         | True   | AllReady       |

  @sim-only
  Scenario: deleting a Barbican waits for the database teardown, then releases the finalizer
    Given the mariadb-operator takes 2 minutes to tear a database down
    When the example "barbican.yaml" is applied
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
    And the operator's metrics have series for the Barbican "barbican" in "openstack"
    When the Barbican "barbican" in "openstack" is deleted
    Then within 1 minute a Normal event "FinalizingDatabase" about "barbican" in "openstack" mentions "Database, User and Grant"
    When 1 minute passes
    Then within 1 minute the Barbican "barbican" in "openstack" exists
    And within 5 minutes the Barbican "barbican" in "openstack" is gone
    And within 1 minute a Normal event "DatabaseFinalized" about "barbican" in "openstack" mentions "released"
    And the Database "barbican" in "openstack" does not exist
    And the operator's metrics lack series for the Barbican "barbican" in "openstack"
