Feature: The key manager is registered in Keystone's catalog, where clients find it

  With spec.keystone.catalog the operator registers the key-manager service and its public and
  internal endpoints in Keystone as the service user, keeps them saying what the Barbican
  exposes, and deregisters them when the block or the Barbican goes. Nova, Cinder and Octavia
  (through castellan) and the CLI find Barbican in the catalog of their own tokens. Another
  registration in the same place is never touched.

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
    And the Keystone user "barbican" with the password "keystone-user-pw" has the roles "admin,service" on the project "service"
    And the Keystone user "nova" with the password "nova-pw" has the role "service" on the project "service"
    And the OpenBaoCluster "openbao-instance" in "openstack" is running
    And the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason             |
      | BarbicanAPIReady     | True   | APIHealthy         |
      | KeystoneCatalogReady | True   | CatalogNotRequired |
      | Ready                | True   | AllReady           |

  Scenario: a catalog block registers the endpoints clients find, follows the exposure, and goes with the block
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        keystone:
          catalog: {}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason            |
      | KeystoneCatalogReady | True   | CatalogRegistered |
      | Ready                | True   | AllReady          |
    And within 1 minute Keystone's catalog has for the service type "key-manager":
      | interface | region    | url                                          |
      | internal  | RegionOne | http://barbican.openstack.svc.cluster.local:9311 |
      | public    | RegionOne | http://barbican.openstack.svc.cluster.local:9311 |
    And the user "nova" with the password "nova-pw" of the project "service" finds the "key-manager" endpoints:
      | interface | region    | url                                              |
      | public    | RegionOne | http://barbican.openstack.svc.cluster.local:9311 |
      | internal  | RegionOne | http://barbican.openstack.svc.cluster.local:9311 |
    And Keystone holds no live token of the user "barbican"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        gateway:
          hostname: kms.example.com
          parentRef: {name: public, namespace: gateways}
      """
    Then within 1 minute Keystone's catalog has for the service type "key-manager":
      | interface | region    | url                                          |
      | internal  | RegionOne | http://barbican.openstack.svc.cluster.local:9311 |
      | public    | RegionOne | https://kms.example.com                      |
    And the user "nova" with the password "nova-pw" of the project "service" finds the "key-manager" endpoints:
      | interface | region    | url                     |
      | public    | RegionOne | https://kms.example.com |
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        keystone: null
      """
    Then within 1 minute Keystone's catalog has no service of the type "key-manager"
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason             |
      | KeystoneCatalogReady | True   | CatalogNotRequired |

  Scenario: deleting the Barbican deregisters what it registered before it goes
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        keystone:
          catalog: {region: RegionOne, publicUrl: "https://kms.cloud.example.com"}
      """
    Then within 1 minute Keystone's catalog has for the service type "key-manager":
      | interface | region    | url                                          |
      | internal  | RegionOne | http://barbican.openstack.svc.cluster.local:9311 |
      | public    | RegionOne | https://kms.cloud.example.com                |
    When the Barbican "barbican" in "openstack" is deleted
    Then within 2 minutes the Barbican "barbican" in "openstack" is gone
    And within 1 minute Keystone's catalog has no service of the type "key-manager"

  @sim-only
  Scenario: a deletion Keystone refuses waits ten minutes, then goes and names what it left
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        keystone:
          catalog: {}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason            |
      | KeystoneCatalogReady | True   | CatalogRegistered |
    When the Keystone user "barbican" with the password "another-pw" has the roles "admin,service" on the project "service"
    And the Barbican "barbican" in "openstack" is deleted
    And 5 minutes pass
    Then the Barbican "barbican" in "openstack" has "/metadata/finalizers/0" set to "barbican.openstack.c5c3.io/finalizer"
    And within 7 minutes the Barbican "barbican" in "openstack" is gone
    And within 1 minute a Warning event "DatabaseAbandoned" about "barbican" in "openstack" mentions "deregistering the Keystone catalog endpoints"
    And within 1 minute Keystone's catalog has for the service type "key-manager":
      | interface | region    | url                                              |
      | internal  | RegionOne | http://barbican.openstack.svc.cluster.local:9311 |
      | public    | RegionOne | http://barbican.openstack.svc.cluster.local:9311 |

  Scenario: another registration in the same place is reported and never touched
    Given someone else registered the public endpoint "https://team-b.example.com" of the service type "key-manager" in the region "RegionOne"
    And the Keystone region "RegionTwo" exists
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        keystone:
          catalog: {}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason               |
      | KeystoneCatalogReady | False  | CatalogEndpointTaken |
      | Ready                | False  | NotAllReady          |
    And within 1 minute Keystone's catalog has for the service type "key-manager":
      | interface | region    | url                        |
      | public    | RegionOne | https://team-b.example.com |
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        keystone:
          catalog: {region: RegionTwo}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason            |
      | KeystoneCatalogReady | True   | CatalogRegistered |
    And within 1 minute Keystone's catalog has for the service type "key-manager":
      | interface | region    | url                                          |
      | internal  | RegionTwo | http://barbican.openstack.svc.cluster.local:9311 |
      | public    | RegionOne | https://team-b.example.com                   |
      | public    | RegionTwo | http://barbican.openstack.svc.cluster.local:9311 |
    When the Barbican "barbican" in "openstack" is deleted
    Then within 2 minutes the Barbican "barbican" in "openstack" is gone
    And within 1 minute Keystone's catalog has for the service type "key-manager":
      | interface | region    | url                        |
      | public    | RegionOne | https://team-b.example.com |

  Scenario: what keeps the registration from happening is named on the condition
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        keystone:
          catalog: {region: RegionNine}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason                |
      | KeystoneCatalogReady | False  | CatalogRegionNotFound |
    When the Keystone region "RegionNine" exists
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason            |
      | KeystoneCatalogReady | True   | CatalogRegistered |
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        keystone: null
      """
    Then within 1 minute Keystone's catalog has no service of the type "key-manager"
    When the Keystone user "barbican" with the password "keystone-user-pw" has the role "service" on the project "service"
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        keystone:
          catalog: {}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason                    |
      | KeystoneCatalogReady | False  | CatalogRegistrationDenied |
    When the Keystone user "barbican" with the password "another-pw" has the roles "admin,service" on the project "service"
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason                       |
      | KeystoneCatalogReady | False  | KeystoneAuthenticationFailed |

  @sim-only
  Scenario: an endpoint deleted by hand is registered again within five minutes
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        keystone:
          catalog: {}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition            | status | reason            |
      | KeystoneCatalogReady | True   | CatalogRegistered |
    When an administrator deletes the public endpoint of the service type "key-manager" in the region "RegionOne"
    And 6 minutes pass
    Then within 1 minute Keystone's catalog has for the service type "key-manager":
      | interface | region    | url                                          |
      | internal  | RegionOne | http://barbican.openstack.svc.cluster.local:9311 |
      | public    | RegionOne | http://barbican.openstack.svc.cluster.local:9311 |
