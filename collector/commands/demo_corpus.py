"""A small built-in knowledge base for `ragpulse demo`: questions, passages and three kinds of answer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    question: str
    passages: tuple[str, ...]
    grounded: str
    invented: str  # plausible, but with facts that are not in the passages
    off_topic: str
    contradicted: str  # what the passages say, with one fact turned around


TOPICS: tuple[Topic, ...] = (
    Topic(
        "When was the Eiffel Tower completed and how tall is it?",
        (
            "The Eiffel Tower was completed in March 1889 as the entrance arch to the 1889 World's Fair in Paris.",
            "The tower is 330 metres tall and was the tallest man-made structure in the world until 1930.",
            "Gustave Eiffel's engineering company designed and built the wrought-iron lattice tower.",
        ),
        "The Eiffel Tower was completed in March 1889. It is 330 metres tall.",
        "The Eiffel Tower was completed in 1925 by Louis Renault. It is 512 metres tall.",
        "Croissants are best enjoyed fresh with butter and jam.",
        "The Eiffel Tower was completed in March 1889. It is 300 metres tall.",
    ),
    Topic(
        "What is the refund window for annual subscriptions?",
        (
            "Annual subscriptions can be refunded in full within 30 days of purchase.",
            "After 30 days, annual plans are refunded pro rata for the unused full months.",
            "Monthly subscriptions are not refundable but can be cancelled at any time.",
        ),
        "Annual subscriptions are refunded in full within 30 days of purchase, and pro rata after that.",
        "Annual subscriptions are refunded in full within 90 days, and customers also receive a free tablet.",
        "Our office is closed on public holidays.",
        "Annual subscriptions cannot be refunded after purchase.",
    ),
    Topic(
        "How do I rotate the API key of a service account?",
        (
            "To rotate a service account key, open Settings, select the service account and click Rotate key.",
            "The old key keeps working for 24 hours after rotation so deployments can be updated.",
            "Keys can also be rotated with the CLI command `acct keys rotate --account NAME`.",
        ),
        "Open Settings, select the service account and click Rotate key; the old key works for 24 hours.",
        "Email the security team at Acme Corp and the key is rotated within 7 business days by Jane Miller.",
        "The weather in Lisbon is mild in spring.",
        "Open Settings, select the service account and click Rotate key; the old key stops working immediately.",
    ),
    Topic(
        "What does the Kafka setting min.insync.replicas control?",
        (
            "min.insync.replicas sets the minimum number of replicas that must acknowledge a write with acks=all.",
            "If fewer replicas are in sync, producers using acks=all receive a NotEnoughReplicas error.",
            "A common production setting is a replication factor of 3 with min.insync.replicas of 2.",
        ),
        "It sets the minimum number of in-sync replicas that must acknowledge an acks=all write, typically 2 of 3.",
        "It controls how many consumers may read a partition at once, and defaults to 12 since Kafka 1.0.",
        "Sourdough bread needs a mature starter.",
        "It sets the maximum number of in-sync replicas that may acknowledge an acks=all write, typically 3 of 3.",
    ),
    Topic(
        "Which vaccines are recommended for travel to Kenya?",
        (
            "Travellers to Kenya are advised to be vaccinated against yellow fever, typhoid and hepatitis A.",
            "Malaria prophylaxis is recommended for most areas below 2,500 metres.",
            "Routine vaccines such as measles and tetanus should be up to date before travel.",
        ),
        "Yellow fever, typhoid and hepatitis A vaccines are advised, plus routine vaccines; malaria prophylaxis too.",
        "Only the rabies vaccine is required, and the Nairobi ministry waives it for stays under 60 days.",
        "The Premier League season starts in August.",
        "Yellow fever, typhoid and hepatitis A vaccines are not advised for Kenya, and malaria prophylaxis is never needed.",
    ),
)
