@real-barbican @sim-only
Feature: The operator runs as the chart's pod

  The kubelet runs the chart's image, ghcr.io/c5c3/barbican-operator, from the workspace's
  built barbican-operator with nothing but the chart's arguments: in-cluster configuration
  (KUBERNETES_SERVICE_HOST, the projected token and CA) reaches the API over TLS as the chart's
  ServiceAccount, and the health port answers the chart's readiness probe.

  Scenario: the operator's container connects as the chart's ServiceAccount and starts its controllers
    Given a simulated cluster with the operator running
    And the chart's ServiceAccount and RBAC are installed
    When the following is applied:
      """
      # The chart's Deployment (templates/deployment.yaml) with webhook.enabled=false and
      # leaderElection.enabled=false: the in-process operator of this scenario is the webhook
      # server and holds no lease.
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: barbican-operator, namespace: barbican-system}
      spec:
        replicas: 1
        selector: {matchLabels: {app.kubernetes.io/name: barbican-operator}}
        template:
          metadata: {labels: {app.kubernetes.io/name: barbican-operator}}
          spec:
            serviceAccountName: barbican-operator
            securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: {type: RuntimeDefault}}
            terminationGracePeriodSeconds: 30
            containers:
            - name: operator
              image: ghcr.io/c5c3/barbican-operator:0.1.0
              args:
              - run
              - --metrics-bind-address=0.0.0.0:8080
              - --health-probe-bind-address=0.0.0.0:8081
              - --webhook-bind-address=0
              - --leader-elect=false
              - --log-format=json
              - --clusters-namespace=barbican-system
              - --max-concurrent-reconciles=4
              env:
              - {name: POD_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
              - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
              - {name: RUST_LOG, value: info}
              ports:
              - {name: metrics, containerPort: 8080, protocol: TCP}
              - {name: health, containerPort: 8081, protocol: TCP}
              livenessProbe: {httpGet: {path: /healthz, port: health}, initialDelaySeconds: 15, periodSeconds: 20}
              readinessProbe: {httpGet: {path: /readyz, port: health}, initialDelaySeconds: 1, periodSeconds: 2}
              securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
      """
    Then the log of a pod of the Deployment "barbican-operator" in "barbican-system" contains "connected to the API server"
    And the log of a pod of the Deployment "barbican-operator" in "barbican-system" contains "BarbicanSecretStore controller starting"
    And within 2 minutes the Deployment "barbican-operator" in "barbican-system" has "/status/readyReplicas" set to "1"
