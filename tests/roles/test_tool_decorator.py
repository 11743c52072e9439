"""`@tool`: typed functions as skills, their schema built by pydantic, their arguments validated by it."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from brain import InMemoryStore
from brain.llm.protocol import ToolCall
from brain.testing import ScriptedLLM, tool_calls
from roles import Assistant, Skills, Tool, tool
from tests.support.runtime import make_runtime

received: list[dict[str, Any]] = []


class Reservation(BaseModel):
    time: str
    people: int = 2


@tool
def get_weather(
    city: str,
    days: int = 1,
    unit: Literal["celsius", "fahrenheit"] = "celsius",
    hourly: bool = False,
    tags: list[str] | None = None,
    threshold: float | None = None,
) -> dict[str, object]:
    """The weather forecast
    for a city.

    Uses the national weather service.

    Args:
        city: The city's name,
            in English.
        days (int): How many days ahead.
        unit: Temperature unit.

    Returns:
        The forecast.
    """
    received.append({"city": city, "days": days, "unit": unit, "hourly": hourly, "tags": tags})
    return {"city": city, "forecast": "sunny", "days": days}


@tool(name="book-table")
async def book_table(restaurant: str, reservation: Reservation, note: str = "") -> str:
    """Book a table."""
    await asyncio.sleep(0)
    received.append({"restaurant": restaurant, "reservation": reservation, "note": note})
    return f"booked {restaurant} at {reservation.time} for {reservation.people}"


@tool
def undocumented(json: str, model_config: int) -> str:  # names that a pydantic model's fields could not have
    return f"{json}/{model_config}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    received.clear()


def call(name: str, arguments: Any) -> ToolCall:
    return ToolCall(id="call_0", name=name, arguments=json.dumps(arguments))


def test_schema_of_a_typed_function_with_a_docstring() -> None:
    assert get_weather.skill.declaration.model_dump() == {
        "name": "get_weather",
        "description": "The weather forecast for a city.",
        "entry": "tests.roles.test_tool_decorator:get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city's name, in English."},
                "days": {"type": "integer", "default": 1, "description": "How many days ahead."},
                "unit": {
                    "type": "string",
                    "enum": ["celsius", "fahrenheit"],
                    "default": "celsius",
                    "description": "Temperature unit.",
                },
                "hourly": {"type": "boolean", "default": False},
                "tags": {
                    "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                    "default": None,
                },
                "threshold": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    }


def test_schema_of_a_model_parameter_and_of_any_parameter_name() -> None:
    assert book_table.skill.declaration.name == "book-table"
    assert book_table.skill.declaration.parameters == {
        "type": "object",
        "properties": {
            "restaurant": {"type": "string"},
            "reservation": {"$ref": "#/$defs/Reservation"},
            "note": {"type": "string", "default": ""},
        },
        "required": ["restaurant", "reservation"],
        "additionalProperties": False,
        "$defs": {
            "Reservation": {
                "title": "Reservation",
                "type": "object",
                "properties": {"time": {"type": "string"}, "people": {"type": "integer", "default": 2}},
                "required": ["time"],
            }
        },
    }
    assert undocumented.skill.declaration.description == ""
    assert list(undocumented.skill.declaration.parameters["properties"]) == ["json", "model_config"]


def test_the_decorated_function_is_still_the_function() -> None:
    assert isinstance(get_weather, Tool)
    assert get_weather("Oslo", days=2) == {"city": "Oslo", "forecast": "sunny", "days": 2}
    assert get_weather.__name__ == "get_weather" and "weather forecast" in (get_weather.__doc__ or "")


def test_what_cannot_be_a_tool() -> None:
    with pytest.raises(ValueError, match="not a skill name"):
        tool(name="book a table")(lambda: None)
    with pytest.raises(TypeError, match="takes a function"):
        tool(print)

    def variadic(*cities: str) -> str:
        return ",".join(cities)

    with pytest.raises(TypeError, match="'cities' cannot be passed by keyword"):
        tool(variadic)


async def test_arguments_are_validated_and_parsed_before_the_call() -> None:
    skills = Skills([get_weather, book_table, undocumented])
    assert json.loads(await skills.invoke(call("get_weather", {"city": "Oslo", "days": "3"}))) == {
        "city": "Oslo",
        "forecast": "sunny",
        "days": 3,
    }
    assert received == [{"city": "Oslo", "days": 3, "unit": "celsius", "hourly": False, "tags": None}]
    assert await skills.invoke(call("undocumented", {"json": "a", "model_config": 1})) == "a/1"


async def test_an_async_tool_is_awaited_with_a_model_argument() -> None:
    skills = Skills([book_table])
    arguments = {"restaurant": "Maaemo", "reservation": {"time": "19:00"}}
    assert await skills.invoke(call("book-table", arguments)) == "booked Maaemo at 19:00 for 2"
    assert received == [{"restaurant": "Maaemo", "reservation": Reservation(time="19:00"), "note": ""}]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("get_weather", {"town": "Oslo"}, "argument 'city': Field required; argument 'town': Extra inputs"),
        ("get_weather", {"city": 7}, "argument 'city': Input should be a valid string"),
        ("get_weather", {"city": "Oslo", "unit": "kelvin"}, "argument 'unit': Input should be 'celsius' or"),
        ("book-table", {"restaurant": "X", "reservation": {"people": "many"}}, "argument 'reservation.time'"),
        ("book-table", ["X"], "arguments must be a JSON object"),
    ],
)
async def test_bad_arguments_are_tool_errors_and_the_function_is_not_called(
    name: str, arguments: Any, expected: str
) -> None:
    answer = await Skills([get_weather, book_table]).invoke(call(name, arguments))
    assert answer.startswith(f"error: {name}: {expected}")
    assert "many" not in answer and "kelvin" not in answer  # no error echoes its input
    assert received == []


async def test_a_yaml_entry_naming_a_tool_is_validated_by_its_model() -> None:
    skills = Skills.load(Skills([book_table]).declarations)  # as an agent file exports and loads them
    assert skills.declarations == (book_table.skill.declaration,)
    arguments = {"restaurant": "Maaemo", "reservation": {"time": "20:00", "people": "4"}}
    assert await skills.invoke(call("book-table", arguments)) == "booked Maaemo at 20:00 for 4"


async def test_an_assistant_calls_the_tool_and_the_next_call_sees_its_result() -> None:
    llm = ScriptedLLM(
        [
            tool_calls(
                ("book-table", {"restaurant": "Maaemo", "reservation": {"time": "19:00", "people": 4}}),
                ("get_weather", {"city": "Oslo", "days": 9.5}),
            ),
            "Booked, and sunny.",
        ]
    )
    assistant = Assistant(make_runtime(llm, store=InMemoryStore()), skills=Skills([book_table, get_weather]))
    assert await assistant.chat("u", "c", "Book Maaemo at 19:00 for 4; weather?") == "Booked, and sunny."
    first, second = llm.calls
    assert [t.name for t in first.tools] == ["book-table", "get_weather"]
    assert first.tools[0].parameters == book_table.skill.declaration.parameters
    assert received == [
        {"restaurant": "Maaemo", "reservation": Reservation(time="19:00", people=4), "note": ""}
    ]
    results = [m.content for m in second.messages if m.role == "tool"]
    assert results == [
        "booked Maaemo at 19:00 for 4",
        "error: get_weather: argument 'days': Input should be a valid integer, got a number with a "
        "fractional part",
    ]
