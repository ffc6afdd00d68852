//! Which links carry which kinds of message, from each actor's declared and
//! configured ends, and the refusals of fault entries that would never fire:
//! a `[[network.links]]` entry for a link or kind no message crosses, a
//! partition that cuts nothing.

use super::dto::{LinkDto, PartitionDto};
use crate::core::input::{invalid, Invalid, Seg};
use crate::core::wire::ActorEnds;
use sim::Partition;

/// The message kinds a `kinds` entry may name: the model's own, numbered as
/// in every model's list together (what `sim::Message::kind` gives).
pub(super) struct Kinds<'a> {
    pub all: Vec<&'static str>,
    pub model: &'a str,
    pub own: &'a [&'static str],
    /// Per actor, its roles and the kinds it sends to whom.
    pub ends: &'a [ActorEnds],
    pub names: &'a [String],
    /// For a variant (`--set`, a protection removed), the ends of the file
    /// as written, by actor name: what they carry counts as carried too.
    pub written: &'a [(String, ActorEnds)],
}

impl Kinds<'_> {
    /// Whether the link `from → to` carries messages of `kind`.
    fn carries(&self, (from, to): (sim::ActorId, sim::ActorId), kind: &str) -> bool {
        let ends = |a: sim::ActorId| &self.ends[a as usize];
        crate::core::wire::carries(ends(from), ends(to), kind)
            || matches!(
                (self.written_ends(from), self.written_ends(to)),
                (Some(f), Some(t)) if crate::core::wire::carries(f, t, kind)
            )
    }

    /// The ends actor `a` has in the file as written, if it is a variant's.
    fn written_ends(&self, a: sim::ActorId) -> Option<&ActorEnds> {
        let name = &self.names[a as usize];
        self.written.iter().find(|(n, _)| n == name).map(|(_, e)| e)
    }

    /// Whether the link `from → to` carries any message.
    pub(super) fn busy(&self, link: (sim::ActorId, sim::ActorId)) -> bool {
        let written = self.written_ends(link.0).map_or(&[][..], |e| &e.sends[..]);
        self.ends[link.0 as usize]
            .sends
            .iter()
            .chain(written)
            .any(|&(k, _)| self.carries(link, k))
    }
}

/// Refuses entry `i` where it would change nothing: none of its `links`
/// carries a message at all, or a kind it names crosses none of them (the
/// sender never sends it, or the receiver never takes it).
pub(super) fn carried(
    l: &LinkDto,
    i: usize,
    links: &[(sim::ActorId, sim::ActorId)],
    names: &[String],
    kinds: &Kinds<'_>,
) -> Result<(), Invalid> {
    use Seg::{Index, Key};
    let carries = |x, kind: &str| kinds.carries(x, kind);
    let scope = match (&l.from, &l.to) {
        (Some(f), Some(t)) => format!("from \"{f}\" to \"{t}\""),
        (Some(f), None) => format!("out of \"{f}\""),
        (None, Some(t)) => format!("into \"{t}\""),
        (None, None) => "over any link".to_string(),
    };
    let all = all_links(names.len());
    let shown = |want: &dyn Fn((sim::ActorId, sim::ActorId)) -> bool| {
        let hits: Vec<String> = all
            .iter()
            .filter(|&&x| want(x))
            .map(|&(f, t)| format!("{} → {}", names[f as usize], names[t as usize]))
            .collect();
        match hits.len() {
            0..=6 => hits.join(", "),
            n => format!("{}, and {} more", hits[..6].join(", "), n - 6),
        }
    };
    let Some(selected) = &l.kinds else {
        let busy = |x| kinds.busy(x);
        if links.iter().any(|&x| busy(x)) {
            return Ok(());
        }
        let near = |x: (sim::ActorId, sim::ActorId)| {
            busy(x)
                && links
                    .iter()
                    .any(|&(f, t)| l.from.is_some() && x.0 == f || l.to.is_some() && x.1 == t)
        };
        // The links that carry messages out of the entry's sender or into
        // its receiver; without any, every link that carries messages.
        let any_near = all.iter().any(|&x| near(x));
        let key = if l.to.is_some() { "to" } else { "from" };
        return Err(invalid(
            vec![Key("network"), Key("links"), Index(i), Key(key)],
            format!("no message ever travels {scope}: this entry would change nothing"),
            format!(
                "name a link that carries messages: {}",
                shown(&|x| if any_near { near(x) } else { busy(x) })
            ),
        ));
    };
    for (j, kind) in selected.iter().enumerate() {
        if links.iter().any(|&x| carries(x, kind)) {
            continue;
        }
        let elsewhere = shown(&|x| carries(x, kind));
        let help = if elsewhere.is_empty() {
            // The model has the kind, but these settings never send it (a
            // reconciliation job that is off, a bank without status queries).
            format!("no actor sends \"{kind}\" with this scenario's settings: drop it from kinds, or turn on what sends it")
        } else {
            format!("\"{kind}\" travels {elsewhere}")
        };
        return Err(invalid(
            kind_at(i, j),
            format!("no \"{kind}\" message ever travels {scope}: a fault for it would never fire"),
            help,
        ));
    }
    Ok(())
}

/// Where kind `j` of links entry `i` stands.
pub(super) fn kind_at(i: usize, j: usize) -> Vec<Seg> {
    use Seg::{Index, Key};
    vec![
        Key("network"),
        Key("links"),
        Index(i),
        Key("kinds"),
        Index(j),
    ]
}

/// Refuses partition `i` when no message ever crosses what it cuts: a
/// fault that never fires, as a links entry for an idle link is.
pub(super) fn cuts_traffic(
    cut: &Partition,
    p: &PartitionDto,
    i: usize,
    names: &[String],
    kinds: &Kinds<'_>,
) -> Result<(), Invalid> {
    use Seg::{Index, Key};
    let busy = |x| kinds.busy(x);
    let mut cut_links = vec![(cut.a, cut.b)];
    if cut.both_ways {
        cut_links.push((cut.b, cut.a));
    }
    if cut_links.iter().any(|&x| busy(x)) {
        return Ok(());
    }
    let (a, b) = (&p.between[0], &p.between[1]);
    let touching: Vec<String> = all_links(names.len())
        .into_iter()
        .filter(|&(f, t)| [f, t].contains(&cut.a) || [f, t].contains(&cut.b))
        .filter(|&x| busy(x))
        .map(|(f, t)| format!("{} → {}", names[f as usize], names[t as usize]))
        .collect();
    let way = if cut.both_ways { "between" } else { "from" };
    let to = if cut.both_ways { "and" } else { "to" };
    Err(invalid(
        vec![Key("network"), Key("partitions"), Index(i), Key("between")],
        format!(
            "no message ever travels {way} \"{a}\" {to} \"{b}\": this partition would cut nothing"
        ),
        format!(
            "cut a link that carries messages: {}",
            if touching.is_empty() {
                "none touches these actors".to_string()
            } else {
                touching.join(", ")
            }
        ),
    ))
}

/// Every directed link between `n` actors, in order.
pub(super) fn all_links(n: usize) -> Vec<(sim::ActorId, sim::ActorId)> {
    let n = n as sim::ActorId;
    (0..n)
        .flat_map(|f| (0..n).filter(move |&t| t != f).map(move |t| (f, t)))
        .collect()
}
