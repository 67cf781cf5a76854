//! The review and token messages a client's identity checks send: SelfSubjectAccessReview
//! (`kubectl auth can-i`), SelfSubjectReview (`kubectl auth whoami`) and TokenRequest
//! (`kubectl create token`).

use super::{Kind, LABEL_SELECTOR_REQUIREMENT, METADATA, Message, many, one, opt};
use Kind::{Bool, Int, Text, Time};

static SELECTOR_REQUIREMENT: Message = Message {
    name: "FieldSelectorRequirement",
    fields: &[
        one(1, "key", Text),
        one(2, "operator", Text),
        many(3, "values", Text),
    ],
};

static FIELD_SELECTOR_ATTRIBUTES: Message = Message {
    name: "FieldSelectorAttributes",
    fields: &[
        one(1, "rawSelector", Text),
        many(2, "requirements", Kind::Message(&SELECTOR_REQUIREMENT)),
    ],
};

static LABEL_SELECTOR_ATTRIBUTES: Message = Message {
    name: "LabelSelectorAttributes",
    fields: &[
        one(1, "rawSelector", Text),
        many(
            2,
            "requirements",
            Kind::Message(&LABEL_SELECTOR_REQUIREMENT),
        ),
    ],
};

static RESOURCE_ATTRIBUTES: Message = Message {
    name: "ResourceAttributes",
    fields: &[
        one(1, "namespace", Text),
        one(2, "verb", Text),
        one(3, "group", Text),
        one(4, "version", Text),
        one(5, "resource", Text),
        one(6, "subresource", Text),
        one(7, "name", Text),
        one(
            8,
            "fieldSelector",
            Kind::Message(&FIELD_SELECTOR_ATTRIBUTES),
        ),
        one(
            9,
            "labelSelector",
            Kind::Message(&LABEL_SELECTOR_ATTRIBUTES),
        ),
    ],
};

static NON_RESOURCE_ATTRIBUTES: Message = Message {
    name: "NonResourceAttributes",
    fields: &[one(1, "path", Text), one(2, "verb", Text)],
};

static SELF_SUBJECT_ACCESS_REVIEW_SPEC: Message = Message {
    name: "SelfSubjectAccessReviewSpec",
    fields: &[
        one(1, "resourceAttributes", Kind::Message(&RESOURCE_ATTRIBUTES)),
        one(
            2,
            "nonResourceAttributes",
            Kind::Message(&NON_RESOURCE_ATTRIBUTES),
        ),
    ],
};

static SUBJECT_ACCESS_REVIEW_STATUS: Message = Message {
    name: "SubjectAccessReviewStatus",
    fields: &[
        one(1, "allowed", Bool),
        one(2, "reason", Text),
        one(3, "evaluationError", Text),
        one(4, "denied", Bool),
    ],
};

pub(super) static SELF_SUBJECT_ACCESS_REVIEW: Message = Message {
    name: "SelfSubjectAccessReview",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&SELF_SUBJECT_ACCESS_REVIEW_SPEC)),
        one(3, "status", Kind::Message(&SUBJECT_ACCESS_REVIEW_STATUS)),
    ],
};

static USER_INFO: Message = Message {
    name: "UserInfo",
    fields: &[
        one(1, "username", Text),
        one(2, "uid", Text),
        many(3, "groups", Text),
    ],
};

static SELF_SUBJECT_REVIEW_STATUS: Message = Message {
    name: "SelfSubjectReviewStatus",
    fields: &[one(1, "userInfo", Kind::Message(&USER_INFO))],
};

pub(super) static SELF_SUBJECT_REVIEW: Message = Message {
    name: "SelfSubjectReview",
    fields: &[
        METADATA,
        one(2, "status", Kind::Message(&SELF_SUBJECT_REVIEW_STATUS)),
    ],
};

static BOUND_OBJECT_REFERENCE: Message = Message {
    name: "BoundObjectReference",
    fields: &[
        one(1, "kind", Text),
        one(2, "apiVersion", Text),
        one(3, "name", Text),
        one(4, "uid", Text),
    ],
};

static TOKEN_REQUEST_SPEC: Message = Message {
    name: "TokenRequestSpec",
    fields: &[
        many(1, "audiences", Text),
        one(3, "boundObjectRef", Kind::Message(&BOUND_OBJECT_REFERENCE)),
        opt(4, "expirationSeconds", Int),
    ],
};

static TOKEN_REQUEST_STATUS: Message = Message {
    name: "TokenRequestStatus",
    fields: &[one(1, "token", Text), one(2, "expirationTimestamp", Time)],
};

pub(super) static TOKEN_REQUEST: Message = Message {
    name: "TokenRequest",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&TOKEN_REQUEST_SPEC)),
        one(3, "status", Kind::Message(&TOKEN_REQUEST_STATUS)),
    ],
};
