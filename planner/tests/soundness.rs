//! Property test: pruning never leaves out a partition holding a row that the filter keeps.
//!
//! Random filters over the key paths (and one other path) are printed as SQL, pruned, and evaluated
//! with Cosmos DB's three-valued operators against random items; every item the filter keeps must
//! be in the targets.

use std::collections::HashMap;

use cosmoql_catalog::{PartitionKey, PartitionKeyDefinition, PartitionKeyPath, SyntheticKey, SyntheticKind};
use cosmoql_planner::{bind, prune, BindContext, Targets};
use cosmoql_value::{and, is_truthy, not, or, query_eq, query_lt, query_ne, Map, Value};
use proptest::prelude::*;

const PATHS: [&str; 4] = ["t", "u", "partitionKey", "x"];

#[derive(Debug, Clone)]
enum Term {
    Path(usize, bool),
    Const(Value),
    Param(usize),
}

#[derive(Debug, Clone)]
enum Pred {
    Eq(Term, Term),
    Ne(Term, Term),
    Lt(Term, Term),
    In(Term, Vec<Term>),
    Bare(usize),
    Lit(Value),
    Not(Box<Pred>),
    And(Box<Pred>, Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Number(1.0)),
        Just(Value::Number(2.0)),
        Just(Value::Number(-0.0)),
        Just(Value::from("a")),
        Just(Value::from("b")),
        Just(Value::from("1-a")),
        Just(Value::Bool(true)),
        Just(Value::Bool(false)),
        Just(Value::Null),
    ]
}

fn constant() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => scalar(),
        1 => Just(Value::from(Vec::<Value>::new())),
        1 => Just(Value::from(vec![Value::Number(1.0)])),
        1 => Just(Value::from(Map::default())),
    ]
}

fn term() -> impl Strategy<Value = Term> {
    prop_oneof![
        4 => (0..PATHS.len(), any::<bool>()).prop_map(|(i, quoted)| Term::Path(i, quoted)),
        4 => constant().prop_map(Term::Const),
        1 => (0..3usize).prop_map(Term::Param),
    ]
}

fn pred() -> impl Strategy<Value = Pred> {
    let leaf = prop_oneof![
        6 => (term(), term()).prop_map(|(a, b)| Pred::Eq(a, b)),
        1 => (term(), term()).prop_map(|(a, b)| Pred::Ne(a, b)),
        1 => (term(), term()).prop_map(|(a, b)| Pred::Lt(a, b)),
        3 => (term(), prop::collection::vec(term(), 1..4)).prop_map(|(a, l)| Pred::In(a, l)),
        1 => (0..PATHS.len()).prop_map(Pred::Bare),
        1 => prop_oneof![Just(Value::Bool(true)), Just(Value::Bool(false)), Just(Value::Null)].prop_map(Pred::Lit),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            1 => inner.clone().prop_map(|p| Pred::Not(Box::new(p))),
            3 => (inner.clone(), inner.clone()).prop_map(|(a, b)| Pred::And(Box::new(a), Box::new(b))),
            3 => (inner.clone(), inner).prop_map(|(a, b)| Pred::Or(Box::new(a), Box::new(b))),
        ]
    })
}

fn sql_term(t: &Term) -> String {
    match t {
        Term::Path(i, false) => format!("c.{}", PATHS[*i]),
        Term::Path(i, true) => format!("c[\"{}\"]", PATHS[*i]),
        Term::Const(v) => v.to_string(),
        Term::Param(i) => format!("@p{i}"),
    }
}

fn sql(p: &Pred) -> String {
    match p {
        Pred::Eq(a, b) => format!("{} = {}", sql_term(a), sql_term(b)),
        Pred::Ne(a, b) => format!("{} != {}", sql_term(a), sql_term(b)),
        Pred::Lt(a, b) => format!("{} < {}", sql_term(a), sql_term(b)),
        Pred::In(a, l) => format!("{} IN ({})", sql_term(a), l.iter().map(sql_term).collect::<Vec<_>>().join(", ")),
        Pred::Bare(i) => format!("c.{}", PATHS[*i]),
        Pred::Lit(v) => v.to_string(),
        Pred::Not(a) => format!("NOT ({})", sql(a)),
        Pred::And(a, b) => format!("({}) AND ({})", sql(a), sql(b)),
        Pred::Or(a, b) => format!("({}) OR ({})", sql(a), sql(b)),
    }
}

fn eval_term(t: &Term, doc: &Value, params: &HashMap<String, Value>) -> Value {
    match t {
        Term::Path(i, _) => doc.get(PATHS[*i]).clone(),
        Term::Const(v) => v.clone(),
        Term::Param(i) => params.get(&format!("p{i}")).cloned().unwrap_or(Value::Undefined),
    }
}

fn eval(p: &Pred, doc: &Value, params: &HashMap<String, Value>) -> Value {
    let t = |x: &Term| eval_term(x, doc, params);
    match p {
        Pred::Eq(a, b) => query_eq(&t(a), &t(b)),
        Pred::Ne(a, b) => query_ne(&t(a), &t(b)),
        Pred::Lt(a, b) => query_lt(&t(a), &t(b)),
        Pred::In(a, l) => {
            let left = t(a);
            if l.iter().any(|x| is_truthy(&query_eq(&left, &t(x)))) {
                Value::Bool(true)
            } else if left.is_undefined() {
                Value::Undefined
            } else {
                Value::Bool(false)
            }
        }
        Pred::Bare(i) => doc.get(PATHS[*i]).clone(),
        Pred::Lit(v) => v.clone(),
        Pred::Not(a) => not(&eval(a, doc, params)),
        Pred::And(a, b) => and(&eval(a, doc, params), &eval(b, doc, params)),
        Pred::Or(a, b) => or(&eval(a, doc, params), &eval(b, doc, params)),
    }
}

fn definitions() -> Vec<PartitionKeyDefinition> {
    let path = |p: &str| PartitionKeyPath::parse(p).unwrap();
    vec![
        PartitionKeyDefinition::hash("/t").unwrap(),
        PartitionKeyDefinition::hierarchical(&["/t", "/u"]).unwrap(),
        PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::Concat {
            paths: vec![path("/t"), path("/u")],
            separator: "-".into(),
        }))
        .unwrap(),
        PartitionKeyDefinition::synthetic(SyntheticKey::new(SyntheticKind::HashSuffix {
            base: path("/t"),
            source: path("/u"),
            buckets: 3,
        }))
        .unwrap(),
    ]
}

/// The item as stored (with its synthetic key) and its key; `None` if the store would reject it.
fn stored(definition: &PartitionKeyDefinition, t: &Value, u: &Value, x: &Value) -> Option<(Value, PartitionKey)> {
    let mut m = Map::default();
    for (name, v) in [("t", t), ("u", u), ("x", x)] {
        if !v.is_undefined() {
            m.insert(name.into(), v.clone());
        }
    }
    if let Some(synthetic) = definition.synthetic_key() {
        let key = synthetic.keys_from_parts(&[t.clone(), u.clone()]).ok()?.into_iter().next()?;
        m.insert("partitionKey".into(), Value::from(key));
    }
    let doc = Value::from(m);
    let values: Vec<Value> = definition.paths().iter().map(|p| p.value_in(&doc).clone()).collect();
    let key = PartitionKey::from_values(&values).ok()?;
    Some((doc, key))
}

fn covered(definition: &PartitionKeyDefinition, targets: &Targets, key: &PartitionKey) -> bool {
    match targets {
        Targets::All => true,
        Targets::Keys(keys) => keys.contains(key),
        Targets::Ranges(ranges) => {
            let epk = definition.epk(key).unwrap();
            ranges.iter().any(|(start, end)| *start <= epk && epk < *end)
        }
    }
}

fn maybe_scalar() -> impl Strategy<Value = Value> {
    prop_oneof![4 => scalar(), 1 => Just(Value::Undefined)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn pruning_is_sound(
        filter in pred(),
        items in prop::collection::vec((maybe_scalar(), maybe_scalar(), maybe_scalar()), 1..10),
        params in prop::collection::vec(constant(), 3),
    ) {
        let text = format!("SELECT * FROM c WHERE {}", sql(&filter));
        let query = cosmoql_parser::parse(&text).unwrap_or_else(|e| panic!("`{text}`: {e}"));
        let params: HashMap<String, Value> = params
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("p{i}"), v))
            .collect();
        // Pruning reads the bound query: parameters are constants there.
        let bound = bind(&query, BindContext { parameters: &params, vector_policies: &[], udfs: &[] })
            .unwrap_or_else(|e| panic!("`{text}` does not bind: {e}"));
        for definition in definitions() {
            let pruning = prune(&bound, query.where_clause.as_ref().map(|w| w.to_string()).as_deref(), &definition);
            for (t, u, x) in &items {
                let Some((doc, key)) = stored(&definition, t, u, x) else { continue };
                if is_truthy(&eval(&filter, &doc, &params)) {
                    prop_assert!(
                        covered(&definition, &pruning.targets, &key),
                        "{text}\nparams {params:?}\ndefinition {:?}\nitem {doc} with key {key} is left out by {:?} ({})",
                        definition.paths(), pruning.targets, pruning.reason
                    );
                }
            }
        }
    }
}
