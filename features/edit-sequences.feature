Feature: Children after a sequence of edits equal a fresh install of the final spec

  The property `barbican-sim soak --edits` checks over generated sequences, kept here for the
  sequences it found: each edit is applied as a user makes it, the operator converges after
  each, and the children must then equal what a fresh install of what the namespace holds
  produces (on a second simulated cluster, compared as features/src/edits/compare.rs says).

  Background:
    Given a simulated cluster with the operator running

  # Seed 46: a `deployment: {}` block applied and then filled. The sim's server-side apply
  # dropped the block (its empty-map path was taken for a field no longer applied), so the
  # Deployment, the PDB and the MariaDB User kept the earlier spec's sizes.
  @sim-only
  Scenario: the edit sequence of seed 46 (5 versions) converges as a fresh install does
    Given the edit-sequence prerequisites in "edits-46"
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata:
        name: store-a
        namespace: edits-46
      spec:
        barbicanRef:
          name: barbican
        isDefault: true
        openBao:
          instanceRef:
            name: openbao-instance
        type: OpenBao
      ---
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata:
        name: barbican
        namespace: edits-46
      spec:
        cache:
          clusterRef:
            name: openstack-memcached
        database:
          clusterRef:
            name: openstack-mariadb
          database: kms
          port: 3307
          secretRef:
            name: barbican-db
        deployment: {}
        image:
          repository: ghcr.io/c5c3/barbican
          tag: "2025.1"
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        middleware:
        - config:
            max_request_body_size: "114688"
          filterFactory: oslo_middleware.sizelimit:RequestBodySizeLimiter.factory
          name: sizelimit
          position: before
        openStackRelease: "2025.1"
        plugins:
        - config:
            plugin_name: Soft Crypto
          configSection: simple_crypto_plugin
          name: simple-crypto
        region: RegionOne
        secretStoreRef:
          kind: SecretStore
          name: openstack-tenant-store
        serviceUser:
          projectName: service
          secretRef:
            name: barbican-keystone
          userDomainName: Default
      """
    And the operator converges on "edits-46"
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata:
        name: barbican
        namespace: edits-46
      spec:
        cache:
          clusterRef:
            name: openstack-memcached
        database:
          clusterRef:
            name: openstack-mariadb
          database: kms
          port: 3307
          secretRef:
            name: barbican-db
        deployment: {}
        image:
          repository: ghcr.io/c5c3/barbican
          tag: "2025.1"
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        middleware:
        - config:
            max_request_body_size: "65536"
          filterFactory: oslo_middleware.sizelimit:RequestBodySizeLimiter.factory
          name: sizelimit
          position: after
        openStackRelease: "2025.1"
        plugins:
        - config:
            plugin_name: Soft Crypto
          configSection: simple_crypto_plugin
          name: simple-crypto
        region: RegionOne
        secretStoreRef:
          kind: SecretStore
          name: openstack-tenant-store
        serviceUser:
          projectName: service
          secretRef:
            name: barbican-keystone
          userDomainName: Default
      """
    And the operator converges on "edits-46"
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata:
        name: barbican
        namespace: edits-46
      spec:
        cache:
          clusterRef:
            name: openstack-memcached
        database:
          clusterRef:
            name: openstack-mariadb
          database: kms
          port: 3307
          secretRef:
            name: barbican-db
        deployment: {}
        image:
          repository: ghcr.io/c5c3/barbican
          tag: "2025.1"
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        middleware:
        - config:
            max_request_body_size: "65536"
          filterFactory: oslo_middleware.sizelimit:RequestBodySizeLimiter.factory
          name: sizelimit
          position: after
        openStackRelease: "2025.1"
        region: RegionOne
        serviceUser:
          projectName: service
          secretRef:
            name: barbican-keystone
          userDomainName: Default
      """
    And the operator converges on "edits-46"
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata:
        name: barbican
        namespace: edits-46
      spec:
        cache:
          clusterRef:
            name: openstack-memcached
        database:
          clusterRef:
            name: openstack-mariadb
          database: kms
          secretRef:
            name: barbican-db
          tls:
            caBundleSecretRef:
              name: mariadb-ca
            clientCertSecretRef:
              name: barbican-db-client-tls
            mode: verify-full
        dbClean:
          cleanUnassociatedProjects: false
          retentionDays: 30
          schedule: 30 3 * * 1
        deployment: {}
        image:
          repository: ghcr.io/c5c3/barbican
          tag: "2025.1"
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        middleware:
        - config:
            max_request_body_size: "65536"
          filterFactory: oslo_middleware.sizelimit:RequestBodySizeLimiter.factory
          name: sizelimit
          position: after
        openStackRelease: "2025.1"
        region: RegionOne
        serviceUser:
          projectName: service
          secretRef:
            name: barbican-keystone
          userDomainName: Default
      """
    And the operator converges on "edits-46"
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata:
        name: barbican
        namespace: edits-46
      spec:
        cache:
          clusterRef:
            name: openstack-memcached
        database:
          clusterRef:
            name: openstack-mariadb
          database: kms
          secretRef:
            name: barbican-db
          tls:
            caBundleSecretRef:
              name: mariadb-ca
            clientCertSecretRef:
              name: barbican-db-client-tls
            mode: verify-full
        dbClean:
          cleanUnassociatedProjects: false
          retentionDays: 30
          schedule: 30 3 * * 1
        deployment:
          preStopSleepSeconds: 5
          replicas: 1
          resources:
            limits:
              ephemeral-storage: 1Gi
              memory: 512Mi
            requests:
              cpu: 200m
              memory: 256Mi
          terminationGracePeriodSeconds: 90
        image:
          repository: ghcr.io/c5c3/barbican
          tag: "2025.1"
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        middleware:
        - config:
            max_request_body_size: "65536"
          filterFactory: oslo_middleware.sizelimit:RequestBodySizeLimiter.factory
          name: sizelimit
          position: after
        openStackRelease: "2025.1"
        region: RegionOne
        serviceUser:
          projectName: service
          secretRef:
            name: barbican-keystone
          userDomainName: Default
      """
    And the operator converges on "edits-46"
    Then the Barbican "barbican" in "edits-46" has "/spec/deployment/replicas" set to "1"
    And the children in "edits-46" equal a fresh install of what it holds

