//! The client's follow-up jobs, which take up its unknown dead letters:
//! `[client.reconcile]`, which asks what was paid and re-drives, or
//! `[client.compensate]`, which cancels them and refunds what the bank paid
//! (a saga's step back, chapter 14); never both. Both share the round
//! settings, validated once by `rounds`.

use super::bank::BankDto;
use super::DAY_MS;
use crate::core::input::{count_in, invalid, one_of, path, positive_duration_us, Invalid, Seg};
use crate::payment::{
    Ask, ClientConfig, CompensateConfig, ReconcileConfig, RedriveKey, RefundWhen, MAX_ROUNDS,
};
use serde::Deserialize;
use sim::ActorId;

/// `[client.compensate]`. Its presence turns the job on.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct CompensateDto {
    after_ms: u64,
    max_rounds: u64,
    refund_when: String,
    refund_key: String,
}

impl Default for CompensateDto {
    fn default() -> Self {
        CompensateDto {
            after_ms: 60_000,
            max_rounds: 3,
            refund_when: "paid".into(),
            refund_key: "own".into(),
        }
    }
}

/// The round loop both follow-up jobs share (`[client.TABLE]` `after_ms`
/// and `max_rounds`, at least `min_rounds`), validated once: a round is a
/// look and, if need be, an act, at most a month apart, so that it stays
/// comparable with key retentions. Returns the rounds.
pub(super) fn rounds(
    table: &'static str,
    after_ms: u64,
    max_rounds: u64,
    min_rounds: u64,
) -> Result<u32, Invalid> {
    let at = |k| path(&["client", table, k]);
    positive_duration_us(
        after_ms,
        30 * DAY_MS,
        at("after_ms"),
        "look a minute after the dead letter: after_ms = 60000",
    )?;
    let n = count_in(
        max_rounds,
        min_rounds,
        MAX_ROUNDS,
        at("max_rounds"),
        "rounds",
    )?;
    Ok(n as u32)
}

/// Refuses a job that asks the bank what it paid (`asks`, set at `at`)
/// when the bank answers no status queries; `then` says what it does next.
fn asks_the_bank(asks: bool, bank_answers: bool, at: Vec<Seg>, then: &str) -> Result<(), Invalid> {
    if asks && !bank_answers {
        return Err(invalid(
            at,
            format!("the job is to ask the bank what it paid{then}, but the bank answers no status queries"),
            "add status_query = true to [bank]",
        ));
    }
    Ok(())
}

impl CompensateDto {
    /// The validated job, which asks and refunds at the bank `bank`; asking
    /// needs a bank that answers.
    fn build(&self, bank_answers: bool, bank: ActorId) -> Result<CompensateConfig, Invalid> {
        let at = |k| path(&["client", "compensate", k]);
        let max_rounds = rounds("compensate", self.after_ms, self.max_rounds, 1)?;
        let refund_when = one_of(
            &self.refund_when,
            &[("paid", RefundWhen::Paid), ("timeout", RefundWhen::Timeout)],
            at("refund_when"),
        )?;
        let asks = refund_when == RefundWhen::Paid;
        asks_the_bank(asks, bank_answers, at("refund_when"), " before it refunds")?;
        let keyed = one_of(
            &self.refund_key,
            &[("own", true), ("none", false)],
            at("refund_key"),
        )?;
        Ok(CompensateConfig {
            after_ms: self.after_ms,
            max_rounds,
            refund_when,
            keyed,
            bank,
        })
    }
}

/// `[client.reconcile]`: a job that takes up the client's unknown dead
/// letters (chapter 14). Its presence turns it on.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, default)]
pub(super) struct ReconcileDto {
    after_ms: u64,
    max_rounds: u64,
    ask: String,
    redrive_key: String,
}

impl Default for ReconcileDto {
    fn default() -> Self {
        ReconcileDto {
            after_ms: 60_000,
            max_rounds: 3,
            ask: "bank".into(),
            redrive_key: "same".into(),
        }
    }
}

impl ReconcileDto {
    /// The validated job; it asks the bank at `bank` or the service at
    /// `service`, and asking the bank needs a bank that answers.
    pub(super) fn build(
        &self,
        bank_answers: bool,
        service: sim::ActorId,
        bank: sim::ActorId,
    ) -> Result<ReconcileConfig, Invalid> {
        let at = |k| path(&["client", "reconcile", k]);
        let max_rounds = rounds("reconcile", self.after_ms, self.max_rounds, 0)?;
        let ask = one_of(
            &self.ask,
            &[("bank", Ask::Bank), ("service", Ask::Service)],
            at("ask"),
        )?;
        asks_the_bank(ask == Ask::Bank, bank_answers, at("ask"), "")?;
        let redrive_key = one_of(
            &self.redrive_key,
            &[("same", RedriveKey::Same), ("new", RedriveKey::New)],
            at("redrive_key"),
        )?;
        Ok(ReconcileConfig {
            after_ms: self.after_ms,
            max_rounds,
            ask,
            asked: match ask {
                Ask::Bank => bank,
                Ask::Service => service,
            },
            redrive_key,
        })
    }
}

/// The client's jobs as its table writes them: `[client.reconcile]` and
/// `[client.compensate]`.
pub(super) type Jobs<'a> = (Option<&'a ReconcileDto>, Option<&'a CompensateDto>);

/// Sets the jobs a client's table asks for on `cfg`: `[client.reconcile]`,
/// which asks and re-drives, or `[client.compensate]`, which refunds; a
/// dead letter is either driven on or taken back, so not both.
pub(super) fn jobs(
    (reconcile, compensate): Jobs<'_>,
    bank: &BankDto,
    (service, bank_id): (ActorId, ActorId),
    cfg: &mut ClientConfig,
) -> Result<(), Invalid> {
    if let Some(r) = reconcile {
        cfg.reconcile = Some(r.build(bank.status_query, service, bank_id)?);
    }
    let Some(comp) = compensate else {
        return Ok(());
    };
    if reconcile.is_some() {
        return Err(invalid(
            path(&["client", "compensate"]),
            "a dead letter is either driven on ([client.reconcile]) or taken back ([client.compensate]), and this client has both jobs",
            "keep one of the two tables",
        ));
    }
    if bank.program.is_some() {
        // The protocol has no refund message (docs/protocol.md): a program
        // bank would never hear of the job's refunds, which would then go
        // unanswered while the ledger judged refunds nobody made. Refused
        // before the job's own checks, whose fixes name the built-in bank.
        return Err(invalid(
            path(&["client", "compensate"]),
            "the compensation job refunds at the bank, and a bank program (bank.program) is never told of refunds: the protocol has no refund message",
            "run the built-in bank (delete bank.program), or delete [client.compensate]",
        ));
    }
    cfg.compensate = Some(comp.build(bank.status_query, bank_id)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The loader's message for `text`, which it must refuse.
    fn refused(text: &str) -> String {
        match crate::Scenario::load("f.toml", text) {
            Ok(_) => panic!("loaded:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_client_has_one_job_and_asking_needs_a_bank_that_answers() {
        let both = "summary = \"s\"\n[client.reconcile]\nask = \"bank\"\n[client.compensate]\n[bank]\nstatus_query = true\n";
        let e = refused(both);
        assert!(
            e.contains("f.toml:4") && e.contains("keep one of the two"),
            "{e}"
        );
        let mute = "summary = \"s\"\n[client.compensate]\nrefund_when = \"paid\"\n";
        let e = refused(mute);
        assert!(
            e.contains("f.toml:3") && e.contains("status_query = true"),
            "{e}"
        );
        let blind = "summary = \"s\"\n[client.compensate]\nrefund_when = \"timeout\"\n";
        assert!(crate::Scenario::load("f.toml", blind).is_ok());
        let e = refused("summary = \"s\"\n[client.compensate]\nrefund_key = \"stable\"\nrefund_when = \"timeout\"\n");
        assert!(e.contains("refund_key") && e.contains("own"), "{e}");
    }

    /// A program in the bank's place hears of no refund: the job is
    /// refused at its table, the built-in bank named as the fix.
    #[test]
    fn a_compensation_needs_the_built_in_bank() {
        let program = "summary = \"s\"\n[client.compensate]\nrefund_when = \"timeout\"\n[bank]\nprogram = [\"sh\", \"-c\", \"exit\"]\n";
        let e = refused(program);
        assert!(
            e.contains("f.toml:2") && e.contains("never told of refunds"),
            "{e}"
        );
        assert!(e.contains("delete bank.program"), "{e}");
        // Asking first would need status_query, a built-in key: the
        // program is named instead.
        let e = refused(&program.replace("timeout", "paid"));
        assert!(e.contains("never told of refunds"), "{e}");
    }
}
