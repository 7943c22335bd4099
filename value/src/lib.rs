//! Document values (placeholder, being written).
