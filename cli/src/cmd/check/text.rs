//! A summary line for people, and how `check` prints it with the shrunk run.

use super::summary::{SweepLine, SweepVerdict};
use crate::cmd::common::{faults_line, situations_line, WarningLine};
use idemsim::catalog::UsageError;
use idemsim::minimize::{Budget, Done};
use idemsim::render::json_line;
use sim::SeedRange;

impl SweepLine {
    /// The summary for people, as `check` prints it.
    pub fn text(&self) -> String {
        if self.verdict == SweepVerdict::NoSeeds {
            return self.no_seeds_text();
        }
        let range = self
            .seeds
            .map(|s| format!(" (seeds {})", SeedRange::from(s)))
            .unwrap_or_default();
        let mut lines = vec![format!(
            "{}: {} over {} schedules{range}, {} events",
            self.scenario,
            self.verdict.as_str(),
            self.schedules,
            self.events
        )];
        if self.interrupted {
            let ran = match (self.seeds, self.requested) {
                (Some(r), Some(q)) => format!(
                    ": seeds {}..{} ran, {}..{} did not",
                    r.start, r.end, r.end, q.end
                ),
                _ => String::new(),
            };
            lines.push(format!(
                "interrupted after {} schedules ({}){ran}; the counts cover only what ran",
                self.schedules,
                idemsim::signals::name()
            ));
        }
        self.push_failure_lines(&mut lines);
        if let Some(p) = &self.portfolio {
            lines.extend(p.text_lines());
        }
        let f = &self.faults;
        lines.push(faults_line(f.lost, f.duplicated, f.partitioned, f.crashed));
        let ops = &self.operations;
        if ops.started > 0 {
            // Only a design with a compensation cancels: the others' line
            // stays as it was.
            let cancelled = match ops.cancelled {
                0 => String::new(),
                n => format!(", {n} cancelled (taken back)"),
            };
            lines.push(format!(
                "operations: {} started; {} done, {} failed{cancelled}, {} unknown ({:.1}%, for a person to reconcile), {} given up silently, {} still open",
                ops.started,
                ops.done,
                ops.failed,
                ops.unknown,
                self.unknown_rate.unwrap_or(0.0) * 100.0,
                ops.abandoned,
                ops.open
            ));
        }
        if let Some(load) = self.load.text(ops) {
            lines.push(format!("load: {load} (1.00 = no retry, no redelivery)"));
        }
        lines.push(situations_line(&self.situations));
        // A situation only a search reached counts too: said apart, so the
        // seeds' line keeps its meaning.
        let searched = self.portfolio.as_ref();
        lines.extend(searched.and_then(|p| p.searched_only_line(&self.situations)));
        lines.extend(self.design_warnings.iter().map(WarningLine::text));
        lines.extend(self.protections.iter().flat_map(|p| p.text_lines()));
        if let Some(r) = &self.repro {
            lines.push(format!("repro: {r}"));
        }
        lines.join("\n") + "\n"
    }

    /// The summary of a sweep that ran no seed: which range was empty.
    fn no_seeds_text(&self) -> String {
        let which = match (&self.shard, self.seeds) {
            (Some(sh), _) => format!(
                "shard {}/{} of seeds {}..{} is empty (more shards than seeds)",
                sh.index, sh.count, sh.of.start, sh.of.end
            ),
            (None, Some(r)) => format!("the seed range {}..{} is empty", r.start, r.end),
            (None, None) => "the seed range is empty".to_string(),
        };
        format!(
            "{}: no seeds ran: {which}; nothing was checked, and `idemsim merge` counts this shard as nothing\n",
            self.scenario
        )
    }

    /// The lowest failure and how many failed, or the lowest run that hit a limit.
    fn push_failure_lines(&self, lines: &mut Vec<String>) {
        if let Some(f) = &self.failure {
            lines.push(format!("lowest failing seed {}: {}", f.seed, f.sentence));
            lines.push(format!(
                "failing seeds: {} of {} ({} violations, {} panics)",
                self.violations + self.panics,
                self.schedules,
                self.violations,
                self.panics
            ));
            if self.panics > 0 {
                lines.push(
                    "a model panicked: that is a bug in idemsim, not a finding about the design; please report it with this command line"
                        .to_string(),
                );
            }
        } else if let Some(i) = &self.first_inconclusive {
            lines.push(format!(
                "{} runs hit a limit; lowest seed {} hit {}",
                self.inconclusive, i.seed, i.limit
            ));
        }
    }

    /// Shrinks the lowest failing seed (unless `no_shrink`), writes the repro
    /// file if asked, and returns the shrunk trace's text.
    pub fn shrink(
        &mut self,
        (s, from): (&models::Scenario, &idemsim::catalog::Entry),
        no_shrink: bool,
        repro_out: Option<&str>,
        budget: Budget,
    ) -> Result<Option<String>, UsageError> {
        let done = self.shrink_done((s, from), no_shrink, repro_out, budget)?;
        Ok(done.as_ref().map(shrunk_text))
    }

    /// [`shrink`](SweepLine::shrink), returning the shrunk failure itself.
    pub fn shrink_done(
        &mut self,
        (s, from): (&models::Scenario, &idemsim::catalog::Entry),
        no_shrink: bool,
        repro_out: Option<&str>,
        budget: Budget,
    ) -> Result<Option<Done>, UsageError> {
        let seed = self.failure.as_ref().map(|f| f.seed);
        let shrunk =
            crate::cmd::shrink::for_check(s, from, &self.sets, seed, no_shrink, repro_out, budget)?;
        self.original_events = shrunk.as_ref().map(|d| d.shrunk.original_report.events);
        self.shrunk_events = shrunk.as_ref().map(|d| d.shrunk.report.events);
        Ok(shrunk)
    }

    /// Prints the summary as `check` does: text on stdout, or JSON on stdout and
    /// text on stderr; the shrunk trace follows the text.
    pub fn print(&self, json: bool, shrunk_text: Option<&str>) {
        self.print_noted(json, shrunk_text, None);
    }

    /// [`print`](SweepLine::print), with the file's `[expect]` not met
    /// (`note`) said after the summary, and in JSON as a record of its own
    /// before it: the summary stays the last line.
    pub(super) fn print_noted(
        &self,
        json: bool,
        shrunk_text: Option<&str>,
        note: Option<&super::expect::ExpectNote>,
    ) {
        let mut text = self.text();
        if let Some(n) = note {
            text.push_str(&n.text());
        }
        if let Some(f) = &self.failing_regression {
            text.push_str(&f.text(self.failure.is_some()));
        }
        if json {
            idemsim::eout!("{text}");
            if let Some(n) = note {
                idemsim::outln!("{}", n.json());
            }
            let data = serde_json::to_value(self).expect("a summary serialises");
            idemsim::outln!("{}", json_line("summary", data));
            if let Some(t) = shrunk_text {
                idemsim::eout!("{t}");
            }
        } else {
            idemsim::out!("{text}");
            if let Some(t) = shrunk_text {
                idemsim::out!("{t}");
            }
        }
    }
}

/// The shrunk trace as `check` prints it after its summary.
pub(super) fn shrunk_text(d: &Done) -> String {
    format!(
        "\nshrunk (docs/shrinking.md):\n{}",
        idemsim::render::formats::text(&d.trace)
    )
}
