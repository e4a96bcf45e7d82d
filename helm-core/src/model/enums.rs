//! A macro for the small closed vocabularies of the domain (roles, statuses,
//! kinds): each is stored as lowercase text, serialised the same way, and parsed
//! with an error that lists the accepted values.

/// Defines an enum whose variants map one-to-one to lowercase strings.
macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident as $what:literal { $($(#[$vdoc:meta])* $variant:ident => $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $text)] $variant,)*
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The stored and displayed form.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::error::Error;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)*
                    _ => Err($crate::error::Error::invalid(
                        $what,
                        format!(
                            "{s:?} is not one of: {}",
                            [$($text,)*].join(", ")
                        ),
                    )),
                }
            }
        }
    };
}

pub(crate) use string_enum;
