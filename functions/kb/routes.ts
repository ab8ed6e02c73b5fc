import { createKbArticle, deleteKbArticle, getKbArticle, listKbArticles, updateKbArticle } from './articles';
import {
  createKbCollection,
  deleteKbCollection,
  getKbCollection,
  listKbCollections,
  updateKbCollection,
} from './collections';

export const kbRoutes = [
  listKbCollections,
  createKbCollection,
  getKbCollection,
  updateKbCollection,
  deleteKbCollection,
  listKbArticles,
  createKbArticle,
  getKbArticle,
  updateKbArticle,
  deleteKbArticle,
];
