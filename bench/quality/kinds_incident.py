"""A generated incident session driven by tool calls, some facts only in tool output.

The memory limit sits past character 500 of a ``kubectl describe`` (beside a
memory *request* and a container port as distractors), and is raised later in
another such output; the image tag is inside the first one, the connection
pool size deep in a configuration file read with a tool; none of the three is
repeated by the user or the assistant. Ten services with ten ports form one
pattern with different subjects, one port moved later; the replica count
changes twice; the first suspected root cause and the first rollback version
(a near-duplicate of the image tag) are withdrawn.
"""

from __future__ import annotations

import random

from bench.quality import vocab
from bench.quality.builder import Builder, Event
from bench.quality.conversations import NUMBER, Script, _say
from bench.quality.kinds_en import PORT, ports

_QUESTIONS = (
    "Should we add an alert for this before we close the incident?",
    "What goes into the timeline section of the postmortem?",
    "How do we tell the support team what customers saw?",
    "Is it worth adding a runbook entry for this?",
    "Which dashboards should the on-call rotation bookmark?",
    "How should the status page wording read right now?",
    "Do we need a change freeze until this is resolved?",
    "What should the handover note to the next shift say?",
)
_ANSWERS = (
    "Keep the timeline in UTC so nobody converts time zones during the review.",
    "A short status update every thirty minutes keeps the support team calm.",
    "Alerts should page only for what a human must act on now.",
    "The runbook entry should start with the symptom a responder sees first.",
    "Blameless wording in the postmortem makes people share what they really did.",
    "We should link the graphs in the ticket so the next shift sees the same picture.",
    "A handover note lists what was tried, what changed and what is still open.",
    "Customers mostly care about when it will work again, not the internals.",
    "It is better to roll forward with a small fix than to stack several changes.",
    "Every manual step we take now should become a script afterwards.",
    "The status page should say what is affected, not guess at the cause.",
    "Let us keep one channel for the incident and one for everything else.",
)


def _describe(rng: random.Random, pod: str, namespace: str, image: str, memory: int) -> str:
    """A ``kubectl describe pod`` whose memory limit sits past character 500."""
    node = f"ip-10-{rng.randint(0, 255)}-{rng.randint(0, 255)}-{rng.randint(0, 255)}"
    text = (
        f"Name:             {pod}\n"
        f"Namespace:        {namespace}\n"
        "Priority:         0\n"
        "Service Account:  default\n"
        f"Node:             {node}.internal/10.0.{rng.randint(0, 255)}.{rng.randint(1, 254)}\n"
        f"Start Time:       Tue, 0{rng.randint(1, 9)} Dec 2026 0{rng.randint(0, 9)}:14:52 +0000\n"
        f"Labels:           app={pod.rsplit('-', 2)[0]}\n"
        f"                  pod-template-hash={pod.rsplit('-', 2)[1]}\n"
        "Annotations:      prometheus.io/scrape: true\n"
        f"                  prometheus.io/port: {rng.randint(9090, 9099)}\n"
        "Status:           Running\n"
        f"IP:               10.42.{rng.randint(0, 255)}.{rng.randint(1, 254)}\n"
        f"Controlled By:    ReplicaSet/{pod.rsplit('-', 1)[0]}\n"
        "Containers:\n"
        "  app:\n"
        f"    Image:          {image}\n"
        f"    Port:           {rng.choice((8080, 8443, 3000, 5000))}/TCP\n"
        "    State:          Running\n"
        "    Last State:     Terminated\n"
        "      Reason:       OOMKilled\n"
        f"      Exit Code:    137\n"
        f"    Restart Count:  {rng.randint(7, 40)}\n"
    )
    text += (
        "    Limits:\n"
        f"      cpu:     {rng.choice((500, 750, 1000))}m\n"
        f"      memory:  {memory}Mi\n"
        "    Requests:\n"
        f"      cpu:     {rng.choice((100, 200, 250))}m\n"
        f"      memory:  {memory // 2 + 32}Mi\n"
        "Conditions:\n  Type              Status\n  Ready             True\n"
        f"Events:\n  Warning  BackOff  {rng.randint(2, 9)}m  kubelet  Back-off restarting "
        "failed container\n"
    )
    return text


def _config(rng: random.Random, service: str, pool: int) -> str:
    """A service's YAML configuration whose pool size sits past character 500."""
    lines = [f"# config/{service}.yaml", "server:", f"  workers: {rng.randint(2, 16)}"]
    lines += [f"  read_timeout_ms: {rng.randint(1, 9) * 500}", "logging:", "  level: info"]
    lines += ["  format: json", "  sample_rate: 0.1", "tracing:", "  enabled: true"]
    lines += [f"  exporter_endpoint: http://otel-collector:{rng.randint(4317, 4318)}"]
    lines += ["features:", *[f"  flag_{i}: {rng.choice(('true', 'false'))}" for i in range(14)]]
    lines += [
        "retries:",
        f"  attempts: {rng.randint(2, 5)}",
        f"  backoff_ms: {rng.randint(50, 400)}",
    ]
    lines += ["datasource:", f"  host: {service}-db.internal", f"  min_pool_size: {pool // 5}"]
    lines += [f"  max_pool_size: {pool}", f"  idle_timeout_s: {rng.randint(30, 600)}"]
    return "\n".join(lines)


def incident(seed: int) -> Script:
    """An on-call incident: kubectl, logs and config reads; updates and one retraction."""
    b = Builder(f"incident:{seed}", 44, _QUESTIONS, _ANSWERS)
    rng = b.rng
    services = vocab.distinct(rng, vocab.SERVICES, 11)
    affected, listed = services[0], services[1:]
    service_ports = ports(rng, len(listed))
    namespace = rng.choice(vocab.NAMESPACES)
    pod = f"{affected}-{rng.randrange(16**7, 16**8):x}-{rng.randint(10000, 99999)}"
    tag = f"v{rng.randint(1, 4)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
    image = f"registry.internal/{affected}:{tag}"
    memory, raised = sorted(rng.sample((384, 512, 640, 768, 896, 1024, 1280, 1536), 2))
    major, minor, patch = (int(part) for part in tag[1:].split("."))
    previous_tag = f"v{major}.{max(minor - 1, 0)}.{(patch + 3) % 10}"  # a near-duplicate
    hotfix_tag = f"v{major}.{minor}.{patch + 1}"
    pool = rng.choice((15, 20, 25, 30, 35, 40, 45, 60))
    incident_id = f"INC-{rng.randint(10000, 99999)}"
    people: set[str] = set()
    on_call = vocab.person(rng, people)
    replicas = rng.sample(range(3, 13), 3)
    scale = f"kubectl -n {namespace} scale deploy/{affected} --replicas="
    causes = rng.sample(list(vocab.ROOT_CAUSES), 2)
    severities = rng.sample(("SEV-1", "SEV-2", "SEV-3"), 2)
    moved = rng.randrange(len(listed))
    moved_to = str(rng.choice([p for p in range(9001, 9999) if str(p) not in service_ports]))

    b.fact("incident", ("incident",), "What is the incident's id?", r"INC-\d+")
    b.fact("severity", ("severity",), "What is the incident's severity?", r"SEV-\d")
    b.fact("on-call", ("on-call engineer", "on-call"), "Who is the on-call engineer?")
    for service in listed:
        b.fact(
            f"{service} port",
            (f"{service} service", service),
            f"Which port does the {service} service listen on?",
            PORT,
        )
    b.fact(
        "memory limit",
        ("memory limit", "memory"),
        f"What is the memory limit of the {affected} container?",
        r"\d+ ?mi",
    )
    b.fact("image tag", ("image",), f"Which image tag does the {affected} pod run?", r"v\d+\.\d+")
    b.fact(
        "pool size",
        ("max_pool_size", "pool size"),
        f"What is the maximum connection pool size of the {affected} service?",
        NUMBER,
    )
    b.fact("replicas", ("replicas",), f"How many replicas does {affected} run?", NUMBER)
    b.fact("root cause", ("root cause",), "What is the root cause of the incident?")
    b.fact(
        "rollback plan",
        ("rollback plan",),
        "Which version does the rollback plan deploy?",
        r"v\d+\.\d+\.\d+",
    )

    def opened(t: int) -> None:
        b.said("incident", t, incident_id)
        b.said("severity", t, severities[0])
        b.said("on-call", t, on_call)
        b.put(
            t,
            f"Paging you in: {affected} pods keep restarting in {namespace}. The incident is "
            f"{incident_id}, severity {severities[0]}, and the on-call engineer is {on_call}.",
            f"Joining {incident_id}: severity {severities[0]}, on-call engineer {on_call}. "
            f"I will start with the {affected} pods.",
        )

    def port_map(start: int, stop: int) -> Event:
        def event(t: int) -> None:
            lines = []
            for service, port in zip(listed[start:stop], service_ports[start:stop], strict=True):
                b.said(f"{service} port", t, port)
                lines.append(f"the {service} service listens on port {port}")
            text = "; ".join(lines)
            b.put(
                t,
                f"From the runbook, the neighbours of {affected}: {text}.",
                f"Noted the port map: {text}.",
            )

        return event

    def described(t: int) -> None:
        b.said("memory limit", t, f"{memory}Mi", (f"{memory} Mi", f"{memory} MiB"), tool=True)
        b.said("image tag", t, tag, (image,), tool=True)
        b.put_tools(
            t,
            f"Describe one of the {affected} pods.",
            [
                (
                    "run_command",
                    f"kubectl -n {namespace} describe pod {pod}",
                    _describe(rng, pod, namespace, image, memory),
                )
            ],
            "The container was OOMKilled and keeps restarting with exit code 137; the "
            "output above has its limits and events.",
        )

    def memory_raised(t: int) -> None:
        b.said("memory limit", t, f"{raised}Mi", (f"{raised} Mi", f"{raised} MiB"), tool=True)
        patch_file = f"patches/{affected}-resources.yaml"
        new_pod = f"{pod.rsplit('-', 1)[0]}-{rng.randint(10000, 99999)}"
        b.put_tools(
            t,
            f"Apply the resources patch from the runbook to {affected}, then describe a new pod.",
            [
                (
                    "run_command",
                    f"kubectl -n {namespace} apply -f {patch_file}",
                    f"deployment.apps/{affected} configured",
                ),
                (
                    "run_command",
                    f"kubectl -n {namespace} describe pod {new_pod}",
                    _describe(rng, new_pod, namespace, image, raised),
                ),
            ],
            "The patch is applied and the new pod is running; its limits are in the output.",
        )

    def rollback(t: int) -> None:
        b.said("rollback plan", t, previous_tag)
        b.put(
            t,
            f"If nothing helps, the rollback plan is to deploy {previous_tag} again.",
            f"Noted: the rollback plan deploys {previous_tag}.",
        )

    def rollback_retracted(t: int) -> None:
        b.retract("rollback plan")
        b.said("rollback plan", t, hotfix_tag)
        b.put(
            t,
            f"We are not rolling back to {previous_tag} after all: the rollback plan now "
            f"deploys the hotfix {hotfix_tag} instead.",
            f"Updated: no {previous_tag}; the rollback plan deploys {hotfix_tag}.",
        )

    def config(t: int) -> None:
        b.said("pool size", t, str(pool), tool=True)
        b.put_tools(
            t,
            f"Read the {affected} service's configuration.",
            [("read_file", f"config/{affected}.yaml", _config(rng, affected, pool))],
            "That is the whole configuration; the datasource block is at the end.",
        )

    def suspect(t: int) -> None:
        b.said("root cause", t, *causes[0])
        b.said("replicas", t, str(replicas[0]))
        b.put(
            t,
            f"My guess: the root cause is {causes[0][0]}. {affected} runs {replicas[0]} "
            "replicas right now.",
            f"Working theory: the root cause is {causes[0][0]}. {affected} has "
            f"{replicas[0]} replicas.",
        )

    def scaled(index: int) -> Event:
        def event(t: int) -> None:
            b.said("replicas", t, str(replicas[index]))
            b.put_tools(
                t,
                f"Scale {affected} to {replicas[index]} replicas.",
                [
                    (
                        "run_command",
                        f"{scale}{replicas[index]}",
                        f"deployment.apps/{affected} scaled",
                    )
                ],
                f"Done: {affected} now runs {replicas[index]} replicas.",
            )

        return event

    def retracted(t: int) -> None:
        b.retract("root cause")
        b.said("root cause", t, *causes[1])
        b.put(
            t,
            f"The graphs rule it out: it is not {causes[0][0]} after all. The root cause is "
            f"{causes[1][0]}.",
            f"Updated: {causes[0][0]} is ruled out; the root cause is {causes[1][0]}.",
        )

    def port_moved(t: int) -> None:
        service = listed[moved]
        b.said(f"{service} port", t, moved_to)
        b.put(
            t,
            f"Ops moved one neighbour to free its port: the {service} service listens on port "
            f"{moved_to} now.",
            f"Updated the port map: the {service} service now listens on port {moved_to}.",
        )

    def escalated(t: int) -> None:
        b.said("severity", t, severities[1])
        b.put(
            t,
            f"Customers are affected now, so the severity is {severities[1]} from here on.",
            f"Updated: the severity of {incident_id} is now {severities[1]}.",
        )

    b.schedule(
        [opened, port_map(0, 5), described, port_map(5, 10), config, suspect, rollback],
        [
            scaled(1),
            escalated,
            memory_raised,
            port_moved,
            retracted,
            rollback_retracted,
            scaled(2),
        ],
    )
    last = _say(
        "Write the incident summary for the postmortem: ids, people, settings and the cause.",
        "Here is the incident summary as it stands.",
    )
    return b.script(f"gen-incident-{seed}", f"Generated incident on {affected}", "en", last)
