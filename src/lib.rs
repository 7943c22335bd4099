//! cosmoql
