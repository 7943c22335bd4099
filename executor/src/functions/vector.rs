//! (being written)

use super::FunctionDef;

pub(crate) const FUNCTIONS: &[FunctionDef] = &[];
