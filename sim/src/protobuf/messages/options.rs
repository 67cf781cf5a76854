//! The options a client sends as a request's body: `DeleteOptions`, which client-go's typed
//! clients (helm's among them) send in protobuf with every delete.

use super::{Kind, Message, many, opt};
use Kind::{Bool, Int, Text};

static PRECONDITIONS: Message = Message {
    name: "Preconditions",
    fields: &[opt(1, "uid", Text), opt(2, "resourceVersion", Text)],
};

/// meta.v1.DeleteOptions, registered in every group version (`v1`, `apps/v1`, …).
pub(super) static DELETE_OPTIONS: Message = Message {
    name: "DeleteOptions",
    fields: &[
        opt(1, "gracePeriodSeconds", Int),
        opt(2, "preconditions", Kind::Message(&PRECONDITIONS)),
        opt(3, "orphanDependents", Bool),
        opt(4, "propagationPolicy", Text),
        many(5, "dryRun", Text),
        opt(6, "ignoreStoreReadErrorWithClusterBreakingPotential", Bool),
    ],
};
