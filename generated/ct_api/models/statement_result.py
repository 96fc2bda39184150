from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.result_set_meta_data import ResultSetMetaData


T = TypeVar("T", bound="StatementResult")


@_attrs_define
class StatementResult:
    """
    Attributes:
        code (None | str | Unset):
        sql_state (None | str | Unset):
        message (None | str | Unset):
        statement_handle (None | str | Unset):
        statement_status_url (None | str | Unset):
        request_id (None | str | Unset):
        created_on (int | None | Unset):
        result_set_meta_data (None | ResultSetMetaData | Unset):
        data (list[list[None | str]] | None | Unset):
    """

    code: None | str | Unset = UNSET
    sql_state: None | str | Unset = UNSET
    message: None | str | Unset = UNSET
    statement_handle: None | str | Unset = UNSET
    statement_status_url: None | str | Unset = UNSET
    request_id: None | str | Unset = UNSET
    created_on: int | None | Unset = UNSET
    result_set_meta_data: None | ResultSetMetaData | Unset = UNSET
    data: list[list[None | str]] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.result_set_meta_data import ResultSetMetaData  # noqa: PLC0415

        code: None | str | Unset
        if isinstance(self.code, Unset):
            code = UNSET
        else:
            code = self.code

        sql_state: None | str | Unset
        if isinstance(self.sql_state, Unset):
            sql_state = UNSET
        else:
            sql_state = self.sql_state

        message: None | str | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        else:
            message = self.message

        statement_handle: None | str | Unset
        if isinstance(self.statement_handle, Unset):
            statement_handle = UNSET
        else:
            statement_handle = self.statement_handle

        statement_status_url: None | str | Unset
        if isinstance(self.statement_status_url, Unset):
            statement_status_url = UNSET
        else:
            statement_status_url = self.statement_status_url

        request_id: None | str | Unset
        if isinstance(self.request_id, Unset):
            request_id = UNSET
        else:
            request_id = self.request_id

        created_on: int | None | Unset
        if isinstance(self.created_on, Unset):
            created_on = UNSET
        else:
            created_on = self.created_on

        result_set_meta_data: dict[str, Any] | None | Unset
        if isinstance(self.result_set_meta_data, Unset):
            result_set_meta_data = UNSET
        elif isinstance(self.result_set_meta_data, ResultSetMetaData):
            result_set_meta_data = self.result_set_meta_data.to_dict()
        else:
            result_set_meta_data = self.result_set_meta_data

        data: list[list[None | str]] | None | Unset
        if isinstance(self.data, Unset):
            data = UNSET
        elif isinstance(self.data, list):
            data = []
            for data_type_0_item_data in self.data:
                data_type_0_item = []
                for data_type_0_item_item_data in data_type_0_item_data:
                    data_type_0_item_item: None | str
                    data_type_0_item_item = data_type_0_item_item_data
                    data_type_0_item.append(data_type_0_item_item)

                data.append(data_type_0_item)

        else:
            data = self.data

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if code is not UNSET:
            field_dict["code"] = code
        if sql_state is not UNSET:
            field_dict["sqlState"] = sql_state
        if message is not UNSET:
            field_dict["message"] = message
        if statement_handle is not UNSET:
            field_dict["statementHandle"] = statement_handle
        if statement_status_url is not UNSET:
            field_dict["statementStatusUrl"] = statement_status_url
        if request_id is not UNSET:
            field_dict["requestId"] = request_id
        if created_on is not UNSET:
            field_dict["createdOn"] = created_on
        if result_set_meta_data is not UNSET:
            field_dict["resultSetMetaData"] = result_set_meta_data
        if data is not UNSET:
            field_dict["data"] = data

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.result_set_meta_data import ResultSetMetaData  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        code = _parse_code(d.pop("code", UNSET))

        def _parse_sql_state(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        sql_state = _parse_sql_state(d.pop("sqlState", UNSET))

        def _parse_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message = _parse_message(d.pop("message", UNSET))

        def _parse_statement_handle(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        statement_handle = _parse_statement_handle(d.pop("statementHandle", UNSET))

        def _parse_statement_status_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        statement_status_url = _parse_statement_status_url(d.pop("statementStatusUrl", UNSET))

        def _parse_request_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        request_id = _parse_request_id(d.pop("requestId", UNSET))

        def _parse_created_on(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        created_on = _parse_created_on(d.pop("createdOn", UNSET))

        def _parse_result_set_meta_data(data: object) -> None | ResultSetMetaData | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                result_set_meta_data_type_0 = ResultSetMetaData.from_dict(data)

                return result_set_meta_data_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ResultSetMetaData | Unset, data)

        result_set_meta_data = _parse_result_set_meta_data(d.pop("resultSetMetaData", UNSET))

        def _parse_data(data: object) -> list[list[None | str]] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                data_type_0 = []
                _data_type_0 = data
                for data_type_0_item_data in _data_type_0:
                    data_type_0_item = []
                    _data_type_0_item = data_type_0_item_data
                    for data_type_0_item_item_data in _data_type_0_item:

                        def _parse_data_type_0_item_item(data: object) -> None | str:
                            if data is None:
                                return data
                            return cast(None | str, data)

                        data_type_0_item_item = _parse_data_type_0_item_item(data_type_0_item_item_data)

                        data_type_0_item.append(data_type_0_item_item)

                    data_type_0.append(data_type_0_item)

                return data_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[list[None | str]] | None | Unset, data)

        data = _parse_data(d.pop("data", UNSET))

        statement_result = cls(
            code=code,
            sql_state=sql_state,
            message=message,
            statement_handle=statement_handle,
            statement_status_url=statement_status_url,
            request_id=request_id,
            created_on=created_on,
            result_set_meta_data=result_set_meta_data,
            data=data,
        )

        statement_result.additional_properties = d
        return statement_result

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
