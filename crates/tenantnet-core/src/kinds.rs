//! Enums of kinds that scenarios name (host policies, buffer policies): generated
//! by the registrations of each interface through [`named_kinds!`].

/// An enum of unit variants, each with its scenario name: serde and JSON Schema
/// under that name, `ALL` in declaration order, `name()`; the first is the default.
macro_rules! named_kinds {
    ($(#[$meta:meta])* $kind:ident { $($(#[$doc:meta])* $v:ident = $name:literal,)* }) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, Debug, Default, PartialEq, Eq,
            serde::Deserialize, serde::Serialize, schemars::JsonSchema,
        )]
        pub enum $kind {
            // the first is the default
            #[default]
            $($(#[$doc])* #[serde(rename = $name)] $v,)*
        }

        impl $kind {
            /// Every kind, in declaration order (their codes in results).
            pub const ALL: &'static [$kind] = &[$($kind::$v,)*];

            /// The name used in scenarios and results.
            pub fn name(self) -> &'static str {
                match self { $($kind::$v => $name,)* }
            }
        }
    };
}
pub(crate) use named_kinds;
