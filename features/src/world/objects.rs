//! Steps that read objects back: whether one exists or is gone, a field set or absent (now or
//! within a span), Events, the config Secrets, condition messages and the mounted barbican.conf.

use super::*;

#[given(expr = "within {int} minute(s) the {word} {string} in {string} exists")]
#[then(expr = "within {int} minute(s) the {word} {string} in {string} exists")]
pub(super) async fn exists(
    world: &mut BarbicanWorld,
    minutes: u64,
    kind: String,
    name: String,
    namespace: String,
) {
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let (kind, name, namespace) = (kind.clone(), name.clone(), namespace.clone());
            async move {
                match env.get(&kind, &namespace, &name).await? {
                    Some(_) => Ok(()),
                    None => Err(format!("{kind} {namespace}/{name} does not exist")),
                }
            }
        })
        .await);
}

#[then(expr = "within {int} minute(s) the {word} {string} in {string} is gone")]
pub(super) async fn gone(
    world: &mut BarbicanWorld,
    minutes: u64,
    kind: String,
    name: String,
    namespace: String,
) {
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let (kind, name, namespace) = (kind.clone(), name.clone(), namespace.clone());
            async move {
                match env.get(&kind, &namespace, &name).await? {
                    None => Ok(()),
                    Some(_) => Err(format!("{kind} {namespace}/{name} still exists")),
                }
            }
        })
        .await);
}

#[then(expr = "the {word} {string} in {string} does not exist")]
pub(super) async fn absent(
    world: &mut BarbicanWorld,
    kind: String,
    name: String,
    namespace: String,
) {
    let found = world.env().get(&kind, &namespace, &name).await.unwrap();
    assert!(
        found.is_none(),
        "{kind} {namespace}/{name} exists: {found:?}"
    );
}

#[then(expr = "the {word} {string} in {string} has {string} set to {string}")]
pub(super) async fn field(
    world: &mut BarbicanWorld,
    kind: String,
    name: String,
    namespace: String,
    pointer: String,
    value: String,
) {
    let found = world
        .env()
        .read_pointer(&kind, &namespace, &name, &pointer)
        .await
        .unwrap();
    assert_eq!(
        found.as_deref(),
        Some(value.as_str()),
        "{pointer} of {kind} {namespace}/{name}"
    );
}

#[then(
    expr = "within {int} minute(s) a {word} event {string} about {string} in {string} mentions {string}"
)]
pub(super) async fn event(
    world: &mut BarbicanWorld,
    minutes: u64,
    severity: String,
    reason: String,
    name: String,
    namespace: String,
    text: String,
) {
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let (severity, reason, name, namespace, text) = (
                severity.clone(),
                reason.clone(),
                name.clone(),
                namespace.clone(),
                text.clone(),
            );
            async move {
                let events = env.event_reasons(&namespace, &name, &severity).await?;
                if events
                    .iter()
                    .any(|(r, note)| *r == reason && note.contains(&text))
                {
                    Ok(())
                } else {
                    Err(format!(
                        "no {severity} {reason} event mentioning {text:?}; events: {events:?}"
                    ))
                }
            }
        })
        .await);
}

#[then(
    expr = "within {int} minute(s) there are {int} config Secrets for the Barbican {string} in {string}"
)]
pub(super) async fn config_secrets(
    world: &mut BarbicanWorld,
    minutes: u64,
    count: usize,
    name: String,
    namespace: String,
) {
    let env = world.env();
    let api = kube::Api::<k8s_openapi::api::core::v1::Secret>::namespaced(
        env.scenario_client(),
        &namespace,
    );
    let selector = format!("cobaltcore.c5c3.io/config-base={name}-config");
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let (api, selector) = (api.clone(), selector.clone());
            async move {
                let listed = api
                    .list(&kube::api::ListParams::default().labels(&selector))
                    .await
                    .map_err(|e| e.to_string())?;
                let names: Vec<String> = listed
                    .items
                    .iter()
                    .map(kube::ResourceExt::name_any)
                    .collect();
                if names.len() == count {
                    Ok(())
                } else {
                    Err(format!("{} config Secrets: {names:?}", names.len()))
                }
            }
        })
        .await);
}

#[then(
    expr = "within {int} minute(s) the {word} condition of the {word} {string} in {string} mentions {string}"
)]
pub(super) async fn condition_mentions(
    world: &mut BarbicanWorld,
    minutes: u64,
    type_: String,
    kind: String,
    name: String,
    namespace: String,
    text: String,
) {
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let (type_, kind, name, namespace, text) = (
                type_.clone(),
                kind.clone(),
                name.clone(),
                namespace.clone(),
                text.clone(),
            );
            async move {
                let conditions = env.conditions(&kind, &namespace, &name).await?;
                match conditions.iter().find(|c| c.type_ == type_) {
                    Some(c) if c.message.contains(&text) => Ok(()),
                    Some(c) => Err(format!(
                        "{type_}: {:?} does not mention {text:?}",
                        c.message
                    )),
                    None => Err(format!("{type_} is not set")),
                }
            }
        })
        .await);
}

#[then(
    expr = "within {int} minute(s) the config mounted by the Deployment {string} in {string} contains {string}"
)]
pub(super) async fn mounted_config(
    world: &mut BarbicanWorld,
    minutes: u64,
    name: String,
    namespace: String,
    text: String,
) {
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let (name, namespace, text) = (name.clone(), namespace.clone(), text.clone());
            async move {
                let (secret, conf) = env.mounted_conf(&namespace, &name).await?;
                if conf.contains(&text) {
                    Ok(())
                } else {
                    Err(format!(
                        "{secret}'s barbican.conf does not contain {text:?}"
                    ))
                }
            }
        })
        .await);
}

#[then(expr = "the {word} {string} in {string} has no {string}")]
pub(super) async fn has_no(
    world: &mut BarbicanWorld,
    kind: String,
    name: String,
    namespace: String,
    pointer: String,
) {
    let object = world
        .env()
        .get(&kind, &namespace, &name)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{kind} {namespace}/{name} does not exist"));
    let json = serde_json::to_value(&object).unwrap();
    assert!(
        json.pointer(&pointer).is_none_or(|v| v.is_null()),
        "{pointer} is set on {kind} {namespace}/{name}: {}",
        json.pointer(&pointer).unwrap()
    );
}

#[then(
    expr = "within {int} minute(s) the {word} {string} in {string} has {string} set to {string}"
)]
pub(super) async fn field_eventually(
    world: &mut BarbicanWorld,
    minutes: u64,
    kind: String,
    name: String,
    namespace: String,
    pointer: String,
    value: String,
) {
    let object = (kind, name, namespace, pointer);
    pointer_eventually(world.env(), minutes, object, |found| {
        found.as_deref() == Some(value.as_str())
    })
    .await;
}

#[then(expr = "within {int} minute(s) the {word} {string} in {string} has no {string}")]
pub(super) async fn has_no_eventually(
    world: &mut BarbicanWorld,
    minutes: u64,
    kind: String,
    name: String,
    namespace: String,
    pointer: String,
) {
    let object = (kind, name, namespace, pointer);
    pointer_eventually(world.env(), minutes, object, |found| {
        found.is_none_or(|v| v == "null")
    })
    .await;
}

/// Waits up to `minutes` until the JSON pointer of the object `(kind, name, namespace,
/// pointer)` reads what `holds` accepts (`None`: absent).
pub(super) async fn pointer_eventually(
    env: &SimEnv,
    minutes: u64,
    (kind, name, namespace, pointer): (String, String, String, String),
    holds: impl Fn(Option<String>) -> bool,
) {
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let (kind, name, namespace, pointer) = (
                kind.clone(),
                name.clone(),
                namespace.clone(),
                pointer.clone(),
            );
            let holds = &holds;
            async move {
                let found = env.read_pointer(&kind, &namespace, &name, &pointer).await?;
                if holds(found.clone()) {
                    Ok(())
                } else {
                    Err(format!(
                        "{pointer} of {kind} {namespace}/{name} is {found:?}"
                    ))
                }
            }
        })
        .await);
}
