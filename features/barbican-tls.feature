Feature: The API serves HTTPS with a certificate cert-manager issues or a Secret holds

  With spec.tls, uWSGI serves HTTPS on 9311 with tls.crt and tls.key of a Secret: one
  cert-manager issues for a Certificate the operator requests (issuerRef), or one someone else
  keeps (secretName). status.endpoint and host_href say https://, the probes speak HTTPS, the
  operator's health check verifies the certificate against the Secret's ca.crt, and a renewed
  certificate rolls the pods. Until the Secret holds a usable pair the Deployment is left as it
  is: pods that cannot start are never rolled out.

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
    And the following is applied:
      """
      apiVersion: cert-manager.io/v1
      kind: Issuer
      metadata: {name: selfsigned, namespace: openstack}
      spec: {selfSigned: {}}
      ---
      apiVersion: cert-manager.io/v1
      kind: Certificate
      metadata: {name: openstack-ca, namespace: openstack}
      spec: {isCA: true, commonName: openstack-ca, secretName: openstack-ca, issuerRef: {name: selfsigned}}
      ---
      apiVersion: cert-manager.io/v1
      kind: Issuer
      metadata: {name: openstack-ca, namespace: openstack}
      spec: {ca: {secretName: openstack-ca}}
      """
    And the example "barbicansecretstore-managed.yaml" is applied
    And the example "barbican.yaml" is applied
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason         |
      | TLSReady         | True   | TLSNotRequired |
      | BarbicanAPIReady | True   | APIHealthy     |
      | Ready            | True   | AllReady       |

  Scenario: an issued certificate serves HTTPS, rolls the pods when renewed, and goes with the block
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        tls:
          issuerRef: {name: openstack-ca}
          dnsNames: [kms.internal.example.com]
      """
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason              |
      | TLSReady         | True   | TLSCertificateReady |
      | DeploymentReady  | True   | DeploymentReady     |
      | BarbicanAPIReady | True   | APIHealthy          |
      | Ready            | True   | AllReady            |
    And within 1 minute the TLSReady condition of the Barbican "barbican" in "openstack" mentions "barbican.openstack.svc.cluster.local, kms.internal.example.com"
    And the Certificate "barbican" in "openstack" has "/spec/secretName" set to "barbican-tls"
    And the Certificate "barbican" in "openstack" has "/spec/issuerRef/name" set to "openstack-ca"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/command/1" set to "--https"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/command/2" set to ":9311,/etc/barbican-api-tls/tls.crt,/etc/barbican-api-tls/tls.key"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/readinessProbe/httpGet/scheme" set to "HTTPS"
    And the Barbican "barbican" in "openstack" reports the endpoint "https://barbican.openstack.svc.cluster.local:9311"
    And within 1 minute the BarbicanAPIReady condition of the Barbican "barbican" in "openstack" mentions "https://barbican.openstack.svc.cluster.local:9311/healthcheck answers"
    And within 1 minute the barbican.conf mounted by the Deployment "barbican" in "openstack" sets [DEFAULT] host_href to "https://barbican.openstack.svc.cluster.local:9311"
    And the pod template of the Deployment "barbican" in "openstack" has the annotation "barbican.c5c3.io/tls-hash"
    When the pod-template annotation "barbican.c5c3.io/tls-hash" of the Deployment "barbican" in "openstack" is noted
    And cert-manager renews the Certificate "barbican" in "openstack"
    Then within 1 minute the pod-template annotation "barbican.c5c3.io/tls-hash" of the Deployment "barbican" in "openstack" has changed
    And within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason     |
      | BarbicanAPIReady | True   | APIHealthy |
      | Ready            | True   | AllReady   |
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        tls: null
      """
    Then within 1 minute the Certificate "barbican" in "openstack" is gone
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason         |
      | TLSReady         | True   | TLSNotRequired |
      | BarbicanAPIReady | True   | APIHealthy     |
      | Ready            | True   | AllReady       |
    And the Barbican "barbican" in "openstack" reports the endpoint "http://barbican.openstack.svc.cluster.local:9311"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/command/1" set to "--http"
    And the Deployment "barbican" in "openstack" has no "/spec/template/metadata/annotations/barbican.c5c3.io~1tls-hash"

  Scenario: a named Secret is waited for, a key that is not the certificate's is refused by name
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        tls: {secretName: kms-cert}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason                   |
      | TLSReady         | False  | WaitingForTLSCertificate |
      | BarbicanAPIReady | True   | APIHealthy               |
      | Ready            | False  | NotAllReady              |
    And within 1 minute the TLSReady condition of the Barbican "barbican" in "openstack" mentions "named by spec.tls.secretName does not exist"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/command/1" set to "--http"
    When the Secret "kms-cert" in "openstack" holds a certificate for "barbican.openstack.svc.cluster.local" and another certificate's key
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition | status | reason           |
      | TLSReady  | False  | TLSSecretInvalid |
    And within 1 minute the TLSReady condition of the Barbican "barbican" in "openstack" mentions "tls.key is not the private key of the certificate in tls.crt"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/command/1" set to "--http"
    When the Secret "kms-cert" in "openstack" holds a certificate for "barbican.openstack.svc.cluster.local" and its key
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason              |
      | TLSReady         | True   | TLSCertificateReady |
      | BarbicanAPIReady | True   | APIHealthy          |
      | Ready            | True   | AllReady            |
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/volumes/2/secret/secretName" set to "kms-cert"

  Scenario: a certificate for another name is served, and the health check says it is not trusted for the Service
    When the Secret "kms-cert" in "openstack" holds a certificate for "kms.example.com" and its key
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        tls: {secretName: kms-cert}
      """
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason              |
      | TLSReady         | True   | TLSCertificateReady |
      | DeploymentReady  | True   | DeploymentReady     |
      | BarbicanAPIReady | False  | ConnectionFailed    |
    And within 1 minute the BarbicanAPIReady condition of the Barbican "barbican" in "openstack" mentions "certificate"

  Scenario: behind a gateway, a BackendTLSPolicy has the Gateway verify the pods with the issuer's CA
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        tls:
          issuerRef: {name: openstack-ca}
        gateway:
          hostname: kms.example.com
          parentRef: {name: public, namespace: gateways}
      """
    Then within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition      | status | reason              |
      | TLSReady       | True   | TLSCertificateReady |
      | HTTPRouteReady | True   | HTTPRouteAccepted   |
      | Ready          | True   | AllReady            |
    And the BackendTLSPolicy "barbican" in "openstack" has "/spec/targetRefs/0/name" set to "barbican"
    And the BackendTLSPolicy "barbican" in "openstack" has "/spec/validation/hostname" set to "barbican.openstack.svc"
    And the BackendTLSPolicy "barbican" in "openstack" has "/spec/validation/caCertificateRefs/0/name" set to "barbican-tls-ca"
    And the ConfigMap "barbican-tls-ca" in "openstack" has "/metadata/labels/app.kubernetes.io~1managed-by" set to "barbican-operator"
    And the Barbican "barbican" in "openstack" reports the endpoint "https://kms.example.com"
    When the field "spec.gateway" of the Barbican "barbican" in "openstack" is set to "null"
    Then within 1 minute the BackendTLSPolicy "barbican" in "openstack" is gone
    And within 1 minute the ConfigMap "barbican-tls-ca" in "openstack" is gone
    And within 1 minute the HTTPRoute "barbican" in "openstack" is gone
    And within 2 minutes the Barbican "barbican" in "openstack" reports:
      | condition      | status | reason               |
      | HTTPRouteReady | True   | HTTPRouteNotRequired |
      | Ready          | True   | AllReady             |

  Scenario: without cert-manager an issuer cannot be asked, and the condition says what to install
    When the apiextensions.k8s.io/v1/CustomResourceDefinition "certificates.cert-manager.io" in "" is deleted
    And the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        tls:
          issuerRef: {name: openstack-ca}
      """
    Then within 1 minute the Barbican "barbican" in "openstack" reports:
      | condition        | status | reason                  |
      | TLSReady         | False  | CertManagerNotInstalled |
      | BarbicanAPIReady | True   | APIHealthy              |
    And within 1 minute the TLSReady condition of the Barbican "barbican" in "openstack" mentions "install cert-manager or name an existing Secret in spec.tls.secretName"

  @sim-only
  Scenario: on a target cluster the health check speaks HTTPS through that API server's proxy
    Given the target cluster "edge-1" is registered
    And the scenario works on the target cluster "edge-1"
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
    And the following is applied:
      """
      apiVersion: cert-manager.io/v1
      kind: Issuer
      metadata: {name: edge-ca, namespace: openstack}
      spec: {selfSigned: {}}
      """
    When the following is applied:
      """
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: BarbicanSecretStore
      metadata: {name: edge-store, namespace: openstack}
      spec:
        type: OpenBao
        barbicanRef: {name: edge-kms}
        isDefault: true
        openBao:
          instanceRef: {name: openbao-instance}
      ---
      apiVersion: barbican.openstack.c5c3.io/v1alpha1
      kind: Barbican
      metadata: {name: edge-kms, namespace: openstack}
      spec:
        openStackRelease: "2025.2"
        targetClusterRef: {name: edge-1}
        image: {repository: ghcr.io/c5c3/barbican, tag: "2025.2"}
        database:
          clusterRef: {name: openstack-mariadb}
          database: barbican
          secretRef: {name: barbican-db}
        cache:
          clusterRef: {name: openstack-memcached}
        keystoneEndpoint: http://keystone.openstack.svc.cluster.local:5000/v3
        serviceUser:
          secretRef: {name: barbican-keystone}
        tls:
          issuerRef: {name: edge-ca}
      """
    Then within 3 minutes the Barbican "edge-kms" in "openstack" reports:
      | condition        | status | reason              |
      | TLSReady         | True   | TLSCertificateReady |
      | BarbicanAPIReady | True   | APIHealthy          |
      | Ready            | True   | AllReady            |
    And within 1 minute the BarbicanAPIReady condition of the Barbican "edge-kms" in "openstack" mentions "https://edge-kms.openstack.svc.cluster.local:9311/healthcheck (through the services/proxy of cluster"
    And the Certificate "edge-kms" in "openstack" has "/spec/secretName" set to "edge-kms-tls"
    When the barbican API of "edge-kms" in "openstack" answers unhealthy
    # A healthy Barbican is probed again at the periodic resync at the latest.
    And 10 minutes pass
    Then within 1 minute the Barbican "edge-kms" in "openstack" reports:
      | condition        | status | reason       |
      | BarbicanAPIReady | False  | APIUnhealthy |
