//! The proof that a model is a folder plus one registry line: a toy model
//! with its own situations, a space, a layer and a design-warning rule,
//! numbered locally as a real model's folder numbers them, joins a registry
//! built with the same `registry!` macro by its one line, and is run.

use crate::core::{Ledger, Obs};

/// The toy model's folder, in miniature: an asker asks a maker for a widget.
mod widgets {
    use crate::core::input::LoadError;
    use crate::core::wire::{Carries, Ends, ModelMessage};
    use crate::core::{
        BuildInput, Built, DesignWarning, Ending, Key, Layer, Metric, ModelSpec, Obs, Op, Per,
        Site, SituationDoc, Space,
    };
    use crate::registry::{layer_index, space_code, Declares};
    use sim::{ActorId, Ctx, NoTimer};
    use std::fmt;
    use std::marker::PhantomData;

    /// Its situations, numbered from the `FIRST` the registry gives it.
    pub mod situations {
        use crate::core::SituationDoc;
        use sim::SituationId;

        const FIRST: SituationId = <super::Widgets as crate::registry::Registered>::FIRST_SITUATION;
        pub(crate) const COUNT: u16 = crate::registry::span(ALL, FIRST);

        /// The maker made a widget.
        pub const WIDGET_MADE: SituationId = FIRST;
        /// The maker was asked for a widget it had made.
        pub const WIDGET_ASKED_AGAIN: SituationId = FIRST + 1;

        pub static ALL: &[SituationDoc] = &[
            SituationDoc {
                id: WIDGET_MADE,
                name: "widget-made",
                doc: "The maker made a widget.",
            },
            SituationDoc {
                id: WIDGET_ASKED_AGAIN,
                name: "widget-asked-again",
                doc: "A widget was asked for again.",
            },
        ];
    }

    /// Widgets, as traces name them: `widget #1`.
    pub static WIDGET: Space = Space {
        code: space_code::<Widgets>(0),
        noun: "widget",
        id_prefix: "#",
        unit: None,
        key_prefix: "widget",
        published: false,
    };

    /// Requests the maker received per widget.
    pub static MAKER_LAYER: Layer = Layer {
        index: layer_index::<Widgets>(0),
        name: "maker",
        per: Per::Operation,
    };

    static MADE: Site = Site { name: "made" };

    static METRICS: &[Metric] = &[Metric::ReceivedPerOperation(&MAKER_LAYER)];

    /// Its one design-warning rule.
    pub const ONE_MAKER_ONLY: &str = "one-maker-only";

    /// The model, as the registry lists it.
    pub struct Widgets;

    impl Declares for Widgets {
        const SITUATIONS: u16 = situations::COUNT;
        const SPACES: &'static [&'static Space] = &[&WIDGET];
        const LAYERS: &'static [&'static Layer] = &[&MAKER_LAYER];
        const RULES: &'static [&'static str] = &[ONE_MAKER_ONLY];
    }

    /// Its messages.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Msg {
        /// Make me one.
        Make(Op),
        /// Made.
        Made(Op),
    }

    impl fmt::Display for Msg {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                Msg::Make(op) => write!(f, "make {op}"),
                Msg::Made(op) => write!(f, "made {op}"),
            }
        }
    }

    impl ModelMessage for Msg {
        const KINDS: &'static [&'static str] = &["make", "made"];
        fn kind(&self) -> u16 {
            u16::from(matches!(self, Msg::Made(_)))
        }
        fn is_reply(&self) -> bool {
            matches!(self, Msg::Made(_))
        }
    }

    /// Asks the maker (actor 1) for widget #1 and is told when it is made.
    pub struct Asker<M>(PhantomData<M>);
    /// Makes what it is asked for, once per ask.
    pub struct Maker<M>(PhantomData<M>);

    /// The widget the asker asks for.
    pub fn widget() -> Op {
        Op::new(&WIDGET, 1)
    }

    impl<M: Carries<Msg>> sim::Actor for Asker<M> {
        type Msg = M;
        type Obs = Obs;
        type Timer = NoTimer;
        type State = ();
        type Storage = ();
        fn reset(&self, state: sim::Fresh<'_, ()>, storage: Option<sim::Fresh<'_, ()>>) {
            state.set(());
            storage.into_iter().for_each(|s| s.set(()));
        }
        fn on_start(&self, _: &mut (), _: &mut (), ctx: &mut impl Ctx<Self>) {
            let op = widget();
            ctx.observe(Obs::Intent {
                op,
                payload: 1,
                window_ms: 0,
            });
            ctx.observe(Obs::AttemptSent { op, attempt: 1 });
            ctx.send(1, M::wrap(Msg::Make(op)));
        }
        fn on_msg(&self, _: &mut (), _: &mut (), _: ActorId, m: M, ctx: &mut impl Ctx<Self>) {
            if let Some(&Msg::Made(op)) = m.peek() {
                ctx.observe(Obs::ToldDone { op, payload: 1 });
                ctx.observe(Obs::Ended {
                    op,
                    ending: Ending::Done,
                });
            }
        }
    }

    impl<M: Carries<Msg>> sim::Actor for Maker<M> {
        type Msg = M;
        type Obs = Obs;
        type Timer = NoTimer;
        type State = ();
        type Storage = ();
        fn reset(&self, state: sim::Fresh<'_, ()>, storage: Option<sim::Fresh<'_, ()>>) {
            state.set(());
            storage.into_iter().for_each(|s| s.set(()));
        }
        fn on_start(&self, _: &mut (), _: &mut (), _: &mut impl Ctx<Self>) {}
        fn on_msg(&self, _: &mut (), _: &mut (), from: ActorId, m: M, ctx: &mut impl Ctx<Self>) {
            if let Some(&Msg::Make(op)) = m.peek() {
                let layer = &MAKER_LAYER;
                ctx.observe(Obs::Received {
                    layer,
                    op,
                    key: Key::None,
                });
                ctx.observe(Obs::Effect {
                    site: &MADE,
                    op,
                    payload: 1,
                });
                ctx.reached(situations::WIDGET_MADE);
                ctx.send(from, M::wrap(Msg::Made(op)));
            }
        }
    }

    impl<M> Ends for Asker<M> {
        const ROLES: &'static [&'static str] = &["asker"];
        const SENDS: &'static [(&'static str, &'static str)] = &[("make", "maker")];
    }

    impl<M> Ends for Maker<M> {
        const ROLES: &'static [&'static str] = &["maker"];
        const SENDS: &'static [(&'static str, &'static str)] = &[("made", "asker")];
    }

    impl<N> ModelSpec<N> for Widgets
    where
        N: sim::Actor + From<Asker<N::Msg>> + From<Maker<N::Msg>>,
        N::Msg: Carries<Msg>,
    {
        fn name(&self) -> &'static str {
            "widgets"
        }
        fn about(&self) -> &'static str {
            "An asker asks a maker for a widget."
        }
        fn tables(&self) -> &'static [&'static str] {
            &[]
        }
        fn build(&self, _: &BuildInput<'_>) -> Result<Built<N>, LoadError> {
            Ok(Built {
                actors: vec![
                    ("asker".into(), Asker(PhantomData).into()),
                    ("maker".into(), Maker(PhantomData).into()),
                ],
                actors_hint: "",
                design_warnings: vec![DesignWarning {
                    id: ONE_MAKER_ONLY,
                    text: "one maker makes every widget".into(),
                    shown_by: Some(situations::WIDGET_MADE),
                    example: "",
                    at: None,
                }],
                unused: Vec::new(),
            })
        }
        fn message_kinds(&self) -> Vec<&'static str> {
            Msg::KINDS.to_vec()
        }
        fn situations(&self) -> &'static [SituationDoc] {
            situations::ALL
        }
        fn metrics(&self) -> &'static [Metric] {
            METRICS
        }
    }
}

use crate::core::wire::{ActorEnds, ModelMessage, WorldMessage};
use crate::core::{Carries, ModelSpec, SituationDoc};
use sim::{SituationId, World};
use std::fmt;

// The one line the toy model needs, in a registry of its own (a model type
// belongs to one registry, and the crate's is taken by the built-in models).
registry! {
    messages { Widgets(widgets::Msg) }
    models { widgets::Widgets => { Asker(widgets::Asker<Msg>), Maker(widgets::Maker<Msg>) } }
}

fn system() -> System {
    let model = MODELS[0];
    let built = model.build(&system_input()).expect("the toy builds");
    let names = built.actors.iter().map(|(n, _)| n.clone()).collect();
    System {
        world: World::new(names),
        nodes: built.actors.into_iter().map(|(_, a)| a).collect(),
        model,
    }
}

#[test]
fn a_toy_model_needs_one_registry_line() {
    let system = system();
    let mut sim = sim::Sim::new(&system);
    // Listed and found by name, its kinds numbered, its actors' ends known.
    assert_eq!(model_names(), ["widgets"]);
    assert!(model("widgets").is_some_and(|m| m.name() == system.model.name()));
    assert_eq!(message_kinds(), ["make", "made"]);
    assert_eq!(system.nodes[1].ends().roles, ["maker"]);
    // Its actor kinds are named, as the state panel's test lists them.
    assert_eq!(ACTOR_KINDS, ["Asker", "Maker"]);
    assert_eq!(system.nodes[1].kind(), "Maker");
    let report = sim.run_seed(&system, 1);
    assert!(
        matches!(report.outcome, sim::Outcome::Holds),
        "{:?}",
        report.outcome
    );
    // Its situation is reported, by its name.
    assert_eq!(situation_names(&report.situations), ["widget-made"]);
    assert!(situations().iter().all(|s| situation_name(s.id) == s.name));
    assert_eq!(
        situation_name(widgets::situations::WIDGET_ASKED_AGAIN),
        "widget-asked-again"
    );
    // Its space names its operations.
    assert_eq!(widgets::widget().to_string(), "widget #1");
    assert_eq!(spaces(), [&widgets::WIDGET]);
    // Its layer counts the load it received.
    let ledger: &Ledger = sim.oracle();
    let layer = usize::from(widgets::MAKER_LAYER.index);
    let received = ledger.get(widgets::widget()).map(|r| r.received[layer]);
    assert_eq!(received, Some(1));
    assert_eq!(layers(), [&widgets::MAKER_LAYER]);
    // Its rule is listed with core's, as `[expect] warnings` may name it.
    assert!(RULES.contains(&widgets::ONE_MAKER_ONLY));
    assert_eq!(
        RULES.len(),
        crate::core::design_warning::CORE_RULES.len() + 1
    );
    let design_warnings = MODELS[0].build(&system_input()).map(|b| b.design_warnings);
    let shown_by = design_warnings.ok().and_then(|h| h[0].shown_by);
    assert_eq!(shown_by.map(situation_name), Some("widget-made"));
}

fn system_input() -> crate::core::BuildInput<'static> {
    static DELAYS: std::sync::OnceLock<crate::core::design_warning::Delays> =
        std::sync::OnceLock::new();
    crate::core::BuildInput {
        text: "",
        fault_phase_us: 0,
        max_time_us: 60 * sim::US_PER_S,
        dir: None,
        delays: DELAYS.get_or_init(Default::default),
    }
}
