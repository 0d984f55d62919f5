//! Enums of kinds that scenarios name (host policies, buffer policies): generated
//! by the registrations of each interface through [`named_kinds!`].

/// An enum of unit variants, each with its scenario name: serde and JSON Schema
/// under that name, `ALL` in declaration order, `name()`; the first is the default,
/// unless `(default Variant)` follows the enum's name.
macro_rules! named_kinds {
    ($(#[$meta:meta])* $kind:ident {
        $(#[$fdoc:meta])* $first:ident = $fname:literal, $($rest:tt)*
    }) => {
        $crate::kinds::named_kinds! {
            $(#[$meta])* $kind (default $first) { $(#[$fdoc])* $first = $fname, $($rest)* }
        }
    };
    ($(#[$meta:meta])* $kind:ident (default $default:ident) {
        $($(#[$doc:meta])* $v:ident = $name:literal,)*
    }) => {
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq,
            serde::Deserialize, serde::Serialize, schemars::JsonSchema,
        )]
        $(#[$meta])*
        pub enum $kind {
            $($(#[$doc])* #[serde(rename = $name)] $v,)*
        }

        impl Default for $kind {
            fn default() -> Self {
                $kind::$default
            }
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
