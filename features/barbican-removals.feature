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
    Given the following is applied:
      """
      apiVersion: scheduling.k8s.io/v1
      kind: PriorityClass
      metadata: {name: high}
      value: 1000000
      """
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

  Scenario: an HTTPRoute moved off a Gateway's namespace and section, its annotations taken away
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        gateway:
          hostname: barbican.example.com
          parentRef: {name: public-gateway, namespace: gateways, sectionName: https}
          annotations: {example.com/rate-limit: "100"}
      """
    Then within 1 minute the HTTPRoute "barbican" in "openstack" has "/spec/parentRefs/0/sectionName" set to "https"
    And the HTTPRoute "barbican" in "openstack" has "/spec/parentRefs/0/namespace" set to "gateways"
    And the HTTPRoute "barbican" in "openstack" has "/metadata/annotations/example.com~1rate-limit" set to "100"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        gateway:
          parentRef: {namespace: null, sectionName: null}
          annotations: null
      """
    Then within 1 minute the HTTPRoute "barbican" in "openstack" has no "/spec/parentRefs/0/sectionName"
    And within 1 minute the HTTPRoute "barbican" in "openstack" has no "/spec/parentRefs/0/namespace"
    And within 1 minute the HTTPRoute "barbican" in "openstack" has no "/metadata/annotations/example.com~1rate-limit"
    And the HTTPRoute "barbican" in "openstack" has "/spec/parentRefs/0/name" set to "public-gateway"

  Scenario: an HPA loses a metric and its floor, and the PDB follows one replica
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        autoscaling: {minReplicas: 2, maxReplicas: 4, targetCPUUtilization: 80, targetMemoryUtilization: 90}
      """
    Then within 1 minute the HorizontalPodAutoscaler "barbican" in "openstack" has "/spec/metrics/1/resource/name" set to "memory"
    And the HorizontalPodAutoscaler "barbican" in "openstack" has "/spec/minReplicas" set to "2"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        autoscaling: {minReplicas: null, targetMemoryUtilization: null}
      """
    Then within 1 minute the HorizontalPodAutoscaler "barbican" in "openstack" has no "/spec/metrics/1"
    And within 1 minute the HorizontalPodAutoscaler "barbican" in "openstack" has "/spec/minReplicas" set to "3"
    And the HorizontalPodAutoscaler "barbican" in "openstack" has "/spec/metrics/0/resource/name" set to "cpu"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {autoscaling: null, deployment: {replicas: 1}}
      """
    Then within 1 minute the HorizontalPodAutoscaler "barbican" in "openstack" is gone
    And within 1 minute the PodDisruptionBudget "barbican" in "openstack" has no "/spec/minAvailable"
    And the PodDisruptionBudget "barbican" in "openstack" has "/spec/maxUnavailable" set to "1"

  Scenario: a NetworkPolicy loses an ingress pod selector and the additional egress
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        networkPolicy:
          ingress:
            - namespaceSelector: {matchLabels: {team: payments}}
              podSelector: {matchLabels: {app: checkout}}
          additionalEgress:
            - to: [{ipBlock: {cidr: 192.0.2.0/24}}]
              ports: [{protocol: TCP, port: 8443}]
      """
    Then within 1 minute the NetworkPolicy "barbican" in "openstack" has "/spec/ingress/0/from/0/podSelector/matchLabels/app" set to "checkout"
    And the NetworkPolicy "barbican" in "openstack" has "/spec/egress/5/to/0/ipBlock/cidr" set to "192.0.2.0/24"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        networkPolicy:
          ingress:
            - namespaceSelector: {matchLabels: {team: payments}}
          additionalEgress: null
      """
    Then within 1 minute the NetworkPolicy "barbican" in "openstack" has no "/spec/ingress/0/from/0/podSelector"
    And within 1 minute the NetworkPolicy "barbican" in "openstack" has no "/spec/egress/5"
    And the NetworkPolicy "barbican" in "openstack" has "/spec/ingress/0/from/0/namespaceSelector/matchLabels/team" set to "payments"

  Scenario: a clean-up schedule and suspension taken out fall back to the defaults
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        dbClean: {schedule: "30 3 * * 1", suspend: true, retentionDays: 7}
      """
    Then within 1 minute the CronJob "barbican-db-clean" in "openstack" has "/spec/schedule" set to "30 3 * * 1"
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/suspend" set to "true"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {dbClean: null}
      """
    Then within 1 minute the CronJob "barbican-db-clean" in "openstack" has "/spec/schedule" set to "1 0 * * *"
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/suspend" set to "false"
    And the CronJob "barbican-db-clean" in "openstack" has "/spec/jobTemplate/spec/template/spec/containers/0/command/4" set to "90"

  Scenario: Deployment fields taken out: a spread constraint, a resource key, the grace period
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        deployment:
          terminationGracePeriodSeconds: 90
          topologySpreadConstraints:
            - maxSkew: 2
              topologyKey: topology.kubernetes.io/region
              whenUnsatisfiable: ScheduleAnyway
              labelSelector: {matchLabels: {app.kubernetes.io/name: barbican, app.kubernetes.io/instance: barbican}}
          resources:
            requests: {cpu: 100m, memory: 256Mi}
            limits: {cpu: "2", memory: 1Gi}
      """
    Then within 1 minute the Deployment "barbican" in "openstack" has "/spec/template/spec/terminationGracePeriodSeconds" set to "90"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/topologySpreadConstraints/0/maxSkew" set to "2"
    And the Deployment "barbican" in "openstack" has no "/spec/template/spec/topologySpreadConstraints/1"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/resources/limits/cpu" set to "2"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        deployment:
          terminationGracePeriodSeconds: null
          topologySpreadConstraints: null
          resources: {limits: {cpu: null}}
      """
    Then within 1 minute the Deployment "barbican" in "openstack" has "/spec/template/spec/terminationGracePeriodSeconds" set to "30"
    And within 1 minute the Deployment "barbican" in "openstack" has no "/spec/template/spec/containers/0/resources/limits/cpu"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/containers/0/resources/limits/memory" set to "1Gi"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/topologySpreadConstraints/0/topologyKey" set to "topology.kubernetes.io/zone"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/topologySpreadConstraints/1/topologyKey" set to "kubernetes.io/hostname"
    And the Deployment "barbican" in "openstack" has "/spec/template/spec/topologySpreadConstraints/0/maxSkew" set to "1"

  Scenario: a selector taken out of an ingress peer leaves the NetworkPolicy
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        networkPolicy:
          ingress:
            - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}
      """
    Then within 1 minute the NetworkPolicy "barbican" in "openstack" has "/spec/ingress/0/from/0/namespaceSelector/matchLabels/kubernetes.io~1metadata.name" set to "monitoring"
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec:
        networkPolicy:
          ingress:
            - namespaceSelector: {}
      """
    Then within 1 minute the NetworkPolicy "barbican" in "openstack" has no "/spec/ingress/0/from/0/namespaceSelector/matchLabels"

  Scenario: the MariaDB User and Grant go when the credentials become Dynamic
    Then within 1 minute the User "barbican" in "openstack" exists
    And within 1 minute the Grant "barbican" in "openstack" exists
    When the Barbican "barbican" in "openstack" is patched with:
      """
      spec: {database: {credentialsMode: Dynamic}}
      """
    Then within 1 minute the User "barbican" in "openstack" is gone
    And within 1 minute the Grant "barbican" in "openstack" is gone
    And the Database "barbican" in "openstack" has "/spec/name" set to "barbican"

  Scenario: a child whose managed-by label is taken away gets it back
    The operator watches its children by the label every one of them carries, so the
    Deployments and Services of other applications never reach it. A child whose label is
    taken away leaves that watch (kube-apiserver sends DELETED), which wakes its Barbican,
    whose next apply puts the label back.
    When the label "app.kubernetes.io/managed-by" is taken off the Deployment "barbican" in "openstack"
    Then within 1 minute the Deployment "barbican" in "openstack" has "/metadata/labels/app.kubernetes.io~1managed-by" set to "barbican-operator"
    When the label "app.kubernetes.io/managed-by" is taken off the Service "barbican" in "openstack"
    Then within 1 minute the Service "barbican" in "openstack" has "/metadata/labels/app.kubernetes.io~1managed-by" set to "barbican-operator"
    And within 3 minutes the Barbican "barbican" in "openstack" reports:
      | condition | status | reason   |
      | Ready     | True   | AllReady |
