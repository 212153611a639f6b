"""What kind of thing a benchmark candidate is (extract/domain/rules/benchmark_kinds.py and
the widened resource cues of name_rules and benchmark_candidates), on invented sentences
(hand-written, not from any paper) shaped like the errors of the random1 and random3 tune
sets: problems, formalisms and tasks that an experiment 'runs on', a modifier inside an
unnamed description, platforms a benchmark collects from, a dataset whose name holds a
size, and resources named after a long description."""

from __future__ import annotations

from papersift.extract.domain.assembly.assemble import assemble
from papersift.extract.domain.rules.benchmark_kinds import (
    a_task_or_term,
    not_a_resource,
    used_as_data,
)
from papersift.testing.drafts import paper_draft as _draft


def _span(text: str, name: str) -> tuple[str, int, int]:
    start = text.index(name)
    return text, start, start + len(name)


def _benchmarks(text: str, names: list[str], methods: tuple[str, ...] = ("OrbitNet",)
                ) -> tuple[list[str], list[str]]:
    got = assemble(_draft(list(methods), names), text)
    return [b.name for b in got.extraction.benchmarks], got.rejected


def test_a_problem_or_formalism_is_not_a_benchmark_even_when_experiments_run_on_it() -> None:
    text = ("We propose OrbitNet. Experiments on the Vehicle Packing Problem (VPP) and on "
            "standard Semi-Markov Decision Process (SMDP) benchmarks show gains on TileSet.")
    kept, rejected = _benchmarks(text, ["Vehicle Packing Problem", "VPP", "SMDP", "TileSet"])
    assert kept == ["TileSet"]
    assert sum("named as a problem" in r for r in rejected) == 2  # the name and its acronym
    assert any("named as a process" in r for r in rejected)


def test_a_task_the_paper_defines_is_neither_a_benchmark_nor_a_method() -> None:
    text = ("We introduce the Orbital Tile Matching (OTM) task. We propose OrbitNet, and "
            "OrbitNet solves OTM on TileSet.")
    got = assemble(_draft(["OrbitNet", "OTM"], ["OTM", "TileSet"]), text)
    assert [b.name for b in got.extraction.benchmarks] == ["TileSet"]
    assert [m.name for m in got.extraction.methods] == ["OrbitNet"]
    assert any(r.startswith("method 'OTM'") and "not a method" in r for r in got.rejected)
    # the same name as a coined proposal, with no task word near it, is kept
    assert a_task_or_term(*_span("We propose OTM, a tiler. OTM wins.", "OTM")) is None


def test_a_refused_term_does_not_refuse_a_method_that_merely_contains_it() -> None:
    text = ("Tile matching (TM) is hard. We propose a method called sparse TM (S-TM). "
            "S-TM beats dense TM methods on TileSet.")
    got = assemble(_draft(["S-TM"], ["TM", "TileSet"]), text)
    assert [m.name for m in got.extraction.methods] == ["S-TM"]
    assert [b.name for b in got.extraction.benchmarks] == ["TileSet"]


def test_a_name_inside_an_unnamed_description_is_a_modifier() -> None:
    text = "Pairs in TileSet form a new TS-OTM translation dataset. OrbitNet wins on TileSet."
    assert not_a_resource(*_span(text, "TS-OTM")) is not None
    kept, _ = _benchmarks(text, ["TS-OTM translation dataset", "TileSet"])
    assert kept == ["TileSet"]


def test_platforms_a_benchmark_collects_from_are_not_benchmarks() -> None:
    text = ("TileBench collects puzzles from three puzzle platforms, Tilely, Puzzlr, and "
            "Gridster. OrbitNet leads TileBench and Chatbot Arena, a platform.")
    for name in ("Tilely", "Puzzlr", "Gridster"):
        assert not_a_resource(*_span(text, name)) is not None
    # a name that says it is a benchmark stays one in a platform list ('platforms like the
    # Chatbot Arena' in a dev abstract)
    arena = "Crowd-sourced platforms like the Chatbot Arena collect prompts."
    assert not_a_resource(*_span(arena, "Chatbot Arena")) is None


def test_a_dataset_whose_name_holds_a_size_is_data_when_the_text_takes_data_from_it() -> None:
    text = "With only a small subset of Tiles-40B-en for training, OrbitNet halves errors."
    assert used_as_data(text, text.index("Tiles-40B-en"))
    kept, _ = _benchmarks(text, ["Tiles-40B-en"])
    assert kept == ["Tiles-40B-en"]
    model = "We fine-tune Orbit-7B and compare it with OrbitNet on TileSet."
    assert not used_as_data(model, model.index("Orbit-7B"))
    kept, _ = _benchmarks(model, ["Orbit-7B", "TileSet"])
    assert kept == ["TileSet"]


def test_a_resource_named_after_a_long_description_is_a_benchmark_not_a_method() -> None:
    # the apposition has commas inside ('a human-annotated, logically complex ... dataset')
    text = ("We present TILO, a human-annotated, logically complex and diverse dataset for "
            "tile reasoning. OrbitNet is trained on TILO.")
    got = assemble(_draft(["OrbitNet", "TILO"], ["TILO"]), text, "TILO: Tile Reasoning")
    assert [(b.name, b.introduced) for b in got.extraction.benchmarks] == [("TILO", True)]
    assert "TILO" not in [m.name for m in got.extraction.methods]
    # four lowercase words between the article and the kind word
    text = ("We introduce a filtered tile-grid complex structure dataset, TIGR (Tile Grid). "
            "OrbitNet is tested on TIGR.")
    got = assemble(_draft(["OrbitNet"], ["TIGR"]), text, "TIGR: Tile Grids")
    assert [b.name for b in got.extraction.benchmarks] == ["TIGR"]


def test_kinds_of_benchmarks_and_cut_names_are_not_named_benchmarks() -> None:
    text = ("Spatio-temporal (ST) data is everywhere. Experiments on five real-world ST "
            "benchmarks and on open-ended QA datasets - TileQA and GridQA - show gains.")
    kept, _ = _benchmarks(text, ["real-world ST benchmarks", "TileQA", "GridQA"])
    assert kept == ["TileQA", "GridQA"]
    # a list the kind word heads, whose last name runs past four words, is not cut short
    long = ("OrbitNet runs in constrained environments, such as Energy Harvesting Wireless "
            "Sensor Networks.")
    kept, _ = _benchmarks(long, [])
    assert kept == []


def test_an_acronym_defined_as_a_problem_is_not_the_papers_method() -> None:
    text = ("To verify our OrbitNet designs, we conduct extensive experiments on the highly "
            "challenging Tile Packing Problem with Time Window (TPPTW) variants.")
    got = assemble(_draft(["OrbitNet", "TPPTW"]), text)
    assert [m.name for m in got.extraction.methods] == ["OrbitNet"]
    assert any(r.startswith("method 'TPPTW'") and "named as a problem" in r
               for r in got.rejected)


def test_a_method_the_paper_defines_in_lowercase_words_stays_a_method() -> None:
    # the lowercase-term rule refuses benchmarks only: papers often define their own
    # method in lowercase ('an energy distribution-based detector (EDBD)')
    text = ("We propose a tile distribution-based detector (TDBD). TDBD improves recall by "
            "3% on TileSet.")
    got = assemble(_draft(["TDBD"], ["TileSet"]), text)
    assert not any("not a method" in r for r in got.rejected)
    assert [d.name for d in got.decisions] == ["TDBD"]  # weighed, not vetoed


def test_a_generic_class_of_models_is_not_the_papers_method() -> None:
    text = ("We present TileBench, a benchmark, and find that a capable Large Language "
            "Model (LLM) still fails on it.")
    got = assemble(_draft(["LLM"], ["TileBench"]), text)
    assert [m.name for m in got.extraction.methods] == []


def test_a_task_named_in_title_case_is_not_a_benchmark() -> None:
    text = ("OrbitNet handles six tasks, including Korean Word Segmentation and Korean "
            "Part-of-Speech Tagging, and is tested on TileSet.")
    kept, rejected = _benchmarks(text, ["Korean Part-of-Speech Tagging", "TileSet"])
    assert kept == ["TileSet"]
    assert any("a task, not a benchmark" in r for r in rejected)


# Shapes of the errors of the random5 tune set (stop 28), in invented sentences.

def test_models_listed_after_a_model_noun_are_not_benchmarks() -> None:
    text = ("Architectures such as Lintrans and Serpent replace attention. We propose "
            "OrbitNet and compress vision encoders, such as Acme's ViT and ZentraNet, on TileSet.")
    kept, rejected = _benchmarks(text, ["Lintrans", "Acme's ViT", "ZentraNet", "TileSet"])
    assert kept == ["TileSet"]
    assert sum("list of models or methods" in r for r in rejected) == 3


def test_an_acronym_coordinated_with_a_kind_of_task_is_a_task() -> None:
    text = "We propose OrbitNet. Results on NLU and generation tasks and on TileSet improve."
    assert a_task_or_term(*_span(text, "NLU")) is not None
    assert a_task_or_term(*_span(text, "TileSet")) is None


def test_a_dataset_list_keeps_names_that_are_methods_elsewhere() -> None:
    text = ("We propose OrbitNet. It helps instruction tuning through IT datasets (FLAN, "
            "CoT, and Alpaca) on three models.")
    kept, rejected = _benchmarks(text, ["FLAN", "CoT", "Alpaca", "IT"])
    assert kept == ["FLAN", "CoT", "Alpaca"]
    assert any("'IT'" in r for r in rejected)


def test_a_system_in_apposition_or_run_on_a_dataset_is_no_benchmark() -> None:
    framework = ("This paper proposes OrbitEvol, an end-to-end framework that evolves "
                 "instruction datasets. It wins on TileSet.")
    kept, _ = _benchmarks(framework, ["TileSet"], methods=("OrbitEvol",))
    assert kept == ["TileSet"]
    evaluated = ("We propose the OrbitNet framework. Evaluated on a real-world social dataset, "
                 "OrbitNet reduces the error by 12%.")
    got = assemble(_draft(["OrbitNet"], []), evaluated, title="OrbitNet: Simulating Crowds")
    assert [m.name for m in got.extraction.methods] == ["OrbitNet"]
    assert got.extraction.benchmarks == []


def test_a_framework_or_platform_for_evaluating_is_a_benchmark() -> None:
    """random1's VMDT and random3's GC4NC (tune): 'the first unified platform for
    evaluating ...' and 'a comprehensive framework for evaluating ...' name benchmarks."""
    text = ("Graph condensation lacks comparisons. We introduce OrbitEval, a comprehensive "
            "framework for evaluating condensation methods across several dimensions.")
    got = assemble(_draft(["OrbitEval"], []), text)
    assert [(b.name, b.introduced) for b in got.extraction.benchmarks] == [("OrbitEval", True)]
    assert got.extraction.methods == []
    method = ("We introduce OrbitNet, a comprehensive framework for condensing graphs; it "
              "is evaluated on TileSet.")
    kept = assemble(_draft(["OrbitNet"], ["TileSet"]), method)
    assert [m.name for m in kept.extraction.methods] == ["OrbitNet"]


def test_random6_shapes_a_named_dataset_in_parentheses_a_spaced_name_and_a_model_version(
        ) -> None:
    """Shapes of random6's tune errors (stop 28), in invented sentences."""
    paren = ("We propose OrbitNet. For this task we construct a relation graph-based "
             "document layout dataset(TileDoc) with 80K images.")
    kept, rejected = _benchmarks(paren, ["TileDoc"])
    assert kept == ["TileDoc"], rejected
    spaced = ("We present the Tile Treebank, a large-scale dataset of recordings. Data: "
              "https://tiletreebank.example.org. We propose OrbitNet.")
    assert _benchmarks(spaced, ["TileTreebank"])[0] == ["Tile Treebank"]
    version = ("Considering that Orbit2 is an improved version of the original Orbit, we "
               "propose OrbitNet, designed for Orbit2, and test it on TileSet.")
    assert _benchmarks(version, ["Orbit2", "TileSet"])[0] == ["TileSet"]
    modifier = "We propose OrbitBench, a comprehensive RM benchmark that covers 49 scenarios."
    got = assemble(_draft([], ["OrbitBench"]), modifier)
    assert [b.name for b in got.extraction.benchmarks] == ["OrbitBench"]


def test_a_corpus_called_by_name_in_the_model_s_method_phrase_is_a_benchmark() -> None:
    """random6 (tune): the model listed 'a ... corpus called Libri-Dys' among methods."""
    text = ("We propose OrbitNet, which (1) aligns speech; (2) introduces a large-scale "
            "simulated corpus called Orbit-Dys; and (3) scores fluency.")
    got = assemble(_draft(["OrbitNet", "large-scale simulated corpus called Orbit-Dys"], []),
                   text)
    assert [(b.name, b.introduced) for b in got.extraction.benchmarks] == [("Orbit-Dys", True)]
    assert [m.name for m in got.extraction.methods] == ["OrbitNet"]


def test_a_sentence_that_opens_with_the_dataset_s_name_gives_the_name() -> None:
    """random6 (tune): 'The FVELER dataset includes ...' named a dataset the model missed."""
    from papersift.extract.domain.rules.benchmark_candidates import missed_benchmarks

    text = "We propose OrbitNet. The TileVer dataset includes code and proofs."
    assert missed_benchmarks(text, set()) == ["TileVer"]


def test_a_known_benchmark_the_model_left_out_is_added_and_passes_the_rules() -> None:
    """Known datasets (rules/known_benchmarks.txt, built from conference abstracts) named
    anywhere in the abstract become candidates; the benchmark rules still judge them."""
    from papersift.extract.domain.rules.known_benchmarks import known_benchmarks_in

    text = ("We propose OrbitNet. It beats prior work on MMLU and on GSM8K, and unlike "
            "MMLU-Pro it needs no labels.")
    assert known_benchmarks_in(text, set()) == ["MMLU", "GSM8K"]  # whole names only
    assert known_benchmarks_in(text, {"gsm8k"}) == ["MMLU"]  # the model gave GSM8K
    kept, _ = _benchmarks(text, [])
    assert kept == ["MMLU", "GSM8K"]


def test_the_known_list_is_built_from_cued_names_and_keeps_words_that_are_mostly_not_names(
) -> None:
    """tools/known_benchmarks.py keeps a name that several papers call a dataset, unless
    most papers that mention it use it as something else."""
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "tools" / "known_benchmarks.py"
    spec = importlib.util.spec_from_file_location("known_benchmarks_tool", script)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    known = tool.known

    cued = ["Results on the TileSet dataset.", "We test on the TileSet benchmark.",
            "TileSet and OrbitBench benchmarks.", "On the While dataset we win."]
    other = ["While training, we add noise."] * 20
    names = {name for name, _, _ in known(cued + other)}
    assert "TileSet" in names and "While" not in names

    # listed beside a known name in three papers, with no cue word: a peer joins, and
    # then its own peers in the next round; a list with no known member adds nothing
    peers = ["We test on TileSet, CubeSet and RingSet.", "Results on TileSet and CubeSet.",
             "TileSet, CubeSet, or RingSet show it.", "On TileSet and RingSet.",
             "On CubeSet and ConeSet we win.",
             "CubeSet and ConeSet agree.", "Both CubeSet and ConeSet, again.",
             "GPT-7 and Bard-9 differ.", "GPT-7 and Bard-9 again.", "GPT-7 and Bard-9 too."]
    grown = {name for name, _, _ in known(cued + peers + other)}
    assert {"TileSet", "CubeSet", "RingSet", "ConeSet"} <= grown
    assert not {"GPT-7", "Bard-9", "While"} & grown


def test_a_known_dataset_is_introduced_only_when_the_paper_s_own_words_say_so() -> None:
    """The model's 'new' flag on a known dataset, in a sentence with a creation verb, is
    not enough (a sentence that develops OrbitNet does not create nuScenes)."""
    text = ("OrbitNet is developed here and evaluated with nuScenes frames. "
            "We also introduce OrbitBench, a new benchmark.")
    draft = _draft(["OrbitNet"], ["nuScenes", "OrbitBench"])
    draft = draft.model_copy(update={"benchmarks": [
        b.model_copy(update={"new": True}) for b in draft.benchmarks]})
    got = assemble(draft, text)
    flags = {b.name: b.introduced for b in got.extraction.benchmarks}
    assert flags == {"nuScenes": False, "OrbitBench": True}


def test_counts_fields_venues_and_coloured_words_are_not_benchmarks() -> None:
    """random7 (tune): '10 GNN benchmark datasets', '18 (variants of) ...', 'NLP
    leaderboard standings', a competition 'at IEEE SaTML 2024'; random5: words a figure
    colours ('\\textbf{\\textcolor{color3}{material}}')."""
    text = ("We propose OrbitNet and test it on 10 GNN benchmark datasets and on 18 (variants "
            "of) tile models, which lifts NLP leaderboard standings. We ran a contest at IEEE "
            "SaTML 2024 on TileSet. It covers \\textbf{\\textcolor{color3}{material}} too.")
    kept, rejected = _benchmarks(text, ["10 GNN", "18 (variants", "NLP", "IEEE SaTML 2024",
                                        "TileSet", "\\textcolor{color3}{material}"])
    assert kept == ["TileSet"]
    assert sum("a size or count" in reason for reason in rejected) == 2


def test_a_resource_named_by_an_acronym_in_parentheses_before_its_kind_word() -> None:
    """random9 (tune): 'the Bone Metastasis (BoneMet) dataset' was refused as a description
    in parentheses; 'the Scientists' First Exam (SFE) benchmark' was missed; 'FineAction-CGR
    benchmark' (the model's words) was not found; '9 NLU and 2 Generation datasets' counts."""
    text = ("We present the Tile Reasoning Exam (TRE) benchmark. We also introduce the Bone "
            "Tiles (BoneTile) dataset, and we establish OrbitEval-CGR, a benchmark for orbits. "
            "Experimental results on 9 NLU and 2 Generation datasets show that OrbitNet helps.")
    got = assemble(_draft(["OrbitNet"], ["BoneTile", "OrbitEval-CGR benchmark", "9 NLU"]), text)
    flags = {b.name: b.introduced for b in got.extraction.benchmarks}
    assert flags == {"BoneTile": True, "OrbitEval-CGR": True, "TRE": True}
    assert any("a size or count" in reason for reason in got.rejected)


def test_a_resource_named_after_a_capitalised_expansion_is_introduced_by_the_verb_before_it(
) -> None:
    """random7 (tune): 'we propose the Panel Understanding and Operation (PUO) benchmark':
    the 'and' inside the expansion is no list of other names."""
    text = ("We propose the Tile Understanding and Orbit (TUO) benchmark of panel images, "
            "and we test OrbitNet on it.")
    got = assemble(_draft(["OrbitNet"], []), text)
    assert {b.name: b.introduced for b in got.extraction.benchmarks} == {"TUO": True}
