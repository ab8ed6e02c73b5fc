import { createCustomField } from './create-field';
import { deleteCustomField } from './delete-field';
import { getCustomField, listCustomFields } from './read-fields';
import { updateCustomField } from './update-field';

export const customFieldRoutes = [
  listCustomFields,
  createCustomField,
  getCustomField,
  updateCustomField,
  deleteCustomField,
];
