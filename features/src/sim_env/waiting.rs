//! Waiting on virtual time: `eventually`, letting time pass, whole passes, a quiet operator,
//! and what the operator wrote or read meanwhile.

use super::*;

impl SimEnv {
    /// Checks `check` until it holds, moving virtual time one [`TICK`] (or a hundredth of
    /// `within`, if longer) at a time for at most `within` of it. The error carries the last
    /// answer.
    pub async fn eventually<F, Fut>(&self, within: Duration, mut check: F) -> Result<(), Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<(), Error>>,
    {
        let deadline = self.clock().now() + jiff::SignedDuration::try_from(within).map_err(text)?;
        // A second at a time, or a hundredth of a long wait: "within 25 minutes" then checks a
        // hundred times instead of fifteen hundred.
        let step = TICK.max(within / 100);
        loop {
            // A few real pauses per tick: the operator's passes run over real I/O.
            for _ in 0..4 {
                match check().await {
                    Ok(()) => return Ok(()),
                    Err(last) if self.clock().now() >= deadline => {
                        let time = if self.clock().is_virtual() {
                            "virtual time"
                        } else {
                            "wall time"
                        };
                        return Err(format!(
                            "still not so after {}s of {time}: {last}",
                            within.as_secs()
                        ));
                    }
                    Err(_) => tokio::time::sleep(REAL_PAUSE).await,
                }
            }
            self.clock().advance(step).await;
        }
    }

    /// Moves virtual time on by `span` the way [`SimEnv::eventually`] does, a step at a time
    /// with real pauses for the operator's round trips, so what the operator does within the
    /// span happens at its time, not all at the end.
    pub async fn let_time_pass(&self, span: Duration) {
        if !self.clock().is_virtual() {
            tokio::time::sleep(span).await;
            return;
        }
        let step = TICK.max(span / 100);
        let mut passed = Duration::ZERO;
        while passed < span {
            let next = step.min(span - passed);
            tokio::time::sleep(REAL_PAUSE).await;
            self.clock().advance(next).await;
            passed += next;
        }
    }

    /// How many passes the operator has started (the Secrets step leads every pass).
    pub fn passes(&self) -> u64 {
        self.metrics.step_runs("Secrets")
    }

    /// Brings one full pass over the Barbican and waits until its parallel group has run. The
    /// pass is woken by an annotation the scenario sets, not by moving time, so nothing that
    /// time would bring (a CronJob firing, a TTL) happens in between.
    pub async fn full_pass(&self, namespace: &str, name: &str) -> Result<(), Error> {
        const PARALLEL: [&str; 4] = ["HTTPRoute", "HealthCheck", "HPA", "NetworkPolicy"];
        let before: Vec<u64> = PARALLEL.iter().map(|s| self.metrics.step_runs(s)).collect();
        let poke = serde_json::json!({"metadata": {"annotations": {
            "barbican-features.example/poke": POKES.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string()
        }}});
        self.patch_barbican(namespace, name, &poke).await?;
        self.eventually(Duration::from_secs(60), || {
            let before = before.clone();
            async move {
                let done = PARALLEL
                    .iter()
                    .zip(&before)
                    .all(|(s, b)| self.metrics.step_runs(s) > *b);
                if done {
                    Ok(())
                } else {
                    Err("no full pass has run".into())
                }
            }
        })
        .await
    }

    /// Waits, without moving virtual time, until the operator has written nothing for a
    /// stretch of real time ([`QUIET`]), so writes still draining from what came before (a
    /// store's ConfigProjected catching up with a roll the scenario waited for) are over
    /// before a window that must be write-free opens. Fails after a minute of real time.
    pub async fn operator_quiet(&self) -> Result<(), Error> {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let mark = self.cluster.audit_mark();
            tokio::time::sleep(QUIET).await;
            let Some(last) = self.operator_writes_since(mark).pop() else {
                return Ok(());
            };
            if std::time::Instant::now() >= deadline {
                return Err(format!(
                    "the operator kept writing with virtual time standing still, last: {last}"
                ));
            }
        }
    }

    /// The operator's writes since `mark` (see [`Cluster::audit_mark`]).
    pub fn operator_writes_since(&self, mark: u64) -> Vec<Entry> {
        self.cluster
            .requests_since(mark)
            .into_iter()
            .filter(|e| e.user_agent == OPERATOR_AGENT && e.is_write())
            .collect()
    }

    /// The operator's reads of the management cluster after `mark` other than watches: the
    /// gets and lists a watch cache would have answered.
    pub fn operator_reads_since(&self, mark: u64) -> Vec<Entry> {
        self.cluster
            .requests_since(mark)
            .into_iter()
            .filter(|e| e.user_agent == OPERATOR_AGENT && !e.is_write() && !e.is_watch())
            .collect()
    }
}
